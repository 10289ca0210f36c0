// One run of the Hugging Face stack from the documents that describe it together: the
// TrainingArguments, a DeepSpeed config, an accelerate config and the launcher's world size.
// Each is read by its own reader; this decides what they decide together (DeepSpeed or not,
// the precision and how the weights are kept, the adapters' dtype), checks they agree, and sets
// vramplan's framework (deepspeed or hf-trainer).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "interop/hf/accelerate_config.h"
#include "interop/hf/deepspeed_config.h"
#include "interop/hf/training_args.h"
#include "vramplan/interop/import.h"

namespace vramplan::interop::hf {

struct HfDocs {
  // TrainingArguments (a file, or a script's flags with trainer_prefix "--").
  const nlohmann::json* trainer = nullptr;
  std::string trainer_prefix;
  // A DeepSpeed config the text holds (a file, a script's here-document) and its key prefix.
  const nlohmann::json* deepspeed = nullptr;
  std::string deepspeed_prefix;
  // An accelerate config (with the launch flags over it, shown as written).
  const nlohmann::json* accelerate = nullptr;
  std::map<std::string, std::string> accelerate_shown_as;
  // The launcher's world size and GPUs per node (0: it does not say).
  int64_t world = 0, per_node = 0;
  std::string world_from;
  // The config files the text names but does not hold, with the key that names them.
  std::vector<std::pair<std::string, std::string>> missing;
  const nlohmann::json* beside = nullptr;  // the settings given beside the text
};

// Reads `docs` as one run into an import of `format`. `out` may already hold what the caller read
// (the launch program, the script's unexpanded words).
Result<Imported> import_hf_run(const HfDocs& docs, ImportBuilder out);

}  // namespace vramplan::interop::hf
