// Megatron-LM's arguments (megatron/training/arguments.py) as vramplan settings. Shared by every
// Megatron form: a launch command or script, a bare argument list, the functional tests'
// model_config.yaml and Megatron-Bridge / NeMo recipes once mapped to argument names.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "interop/import_builder.h"

namespace vramplan::interop {

// One argument as the user wrote it: "--tensor-model-parallel-size" and "8"; a flag without a
// value has value "true"; nargs='+' values are joined by spaces.
struct MegatronArg {
  std::string name;
  std::string value;
};
using MegatronArgs = std::vector<MegatronArg>;

// "--name value", "--name=value", "--flag", "--name v1 v2" from a command's words (from the first
// word starting with "--"); `rest` collects what is no argument.
MegatronArgs megatron_args_from_words(std::span<const std::string> words,
                                      std::vector<std::string>* rest = nullptr);

// Everything the arguments say about memory, into `out`: the model (a megatron_gpt model_config,
// model/megatron_config.h, its vocabulary from the tokenizer arguments), training, precision,
// parallelism, recomputation and Megatron's conventions; every other argument is listed as
// ignored with its reason. `world_size` is the launcher's (0: unknown), described by
// `world_from` ("--nproc_per_node 8 × --nnodes 2"). Contradictions are errors naming the argument.
std::optional<Error> import_megatron_args(const MegatronArgs& args, int64_t world_size,
                                          const std::string& world_from, ImportBuilder& out);

}  // namespace vramplan::interop
