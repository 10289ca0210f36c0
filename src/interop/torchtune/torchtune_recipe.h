// A torchtune recipe config (recipes/configs/<model>/<recipe>.yaml) as a run's settings: the
// model builder (LoRA / QLoRA from lora_ / qlora_ builders), its LoRA options, batch and
// accumulation, dtype (torchtune trains everything in it: weights, gradients, optimizer states),
// activation checkpointing and offloading, the optimizer and loss components, FSDP options.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "interop/hf/doc_keys.h"

namespace vramplan::interop::torchtune {

// How the recipe is launched: `tune run [--nproc_per_node N] [--nnodes M] RECIPE --config ...`,
// from a launch command or the config's own header comment (torchtune's configs say how to
// launch them there).
struct RecipeLaunch {
  std::string recipe;  // "lora_finetune_single_device" ("" when unknown)
  int64_t world = 0;   // 0: not said
  std::string world_from;
};

bool looks_like_torchtune_recipe(const nlohmann::json& doc);

// Reads the recipe into `out` (torchtune's conventions included); every key is listed.
std::optional<Error> read_torchtune_recipe(hf::DocKeys& keys, const RecipeLaunch& launch,
                                           ImportBuilder& out);

}  // namespace vramplan::interop::torchtune
