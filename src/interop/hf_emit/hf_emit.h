// What the writers of the Hugging Face stack's formats share (--emit deepspeed, accelerate,
// torchtune): the model by name, the data-parallel layout, the precision plan, the batch as
// micro-batch × accumulation steps, and conventions that must be the ones --from will read back,
// so that the file gives the same estimate. What a format cannot express is an error naming emit.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "interop/hf/hf_common.h"
#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan::interop::hf_emit {

// The model as the stack loads it: a preset's Hub id, else the Hub id or directory it came from.
// Errors (naming emit): a custom or inline architecture, or a preset whose shape was changed.
Result<std::string> model_name(const std::string& format, const Scenario& s);

// Data parallelism only (tp, pp, cp, ep and vpp of 1); whole-layer recomputation or none; no fp8,
// dropout masks or frozen layers.
std::optional<Error> check_data_parallel(const std::string& format, const Scenario& s);

// The precision whose plan (hf_common.h) the scenario's dtypes follow under `weights`.
Result<hf::Precision> precision_of(const std::string& format, const Scenario& s,
                                   hf::Weights weights);

// Gradient accumulation steps: global_batch / (micro_batch · dp).
Result<int64_t> accumulation_steps(const std::string& format, const Scenario& s);

// Every convention and overhead of `s` equals `reference`'s (the scenario --from builds from the
// file: a framework preset, or explicit settings, with what the file expresses copied in);
// otherwise an error naming the first setting that differs and what the format gives it.
std::optional<Error> check_conventions(const std::string& format, const Scenario& s,
                                       const Scenario& reference);

// `--name value` lines of a launch command, continued with backslashes.
class FlagLines {
 public:
  void add(const std::string& flag, const std::string& value = "") {
    lines_.push_back(value.empty() ? flag : flag + " " + value);
  }
  void add(const std::string& flag, int64_t value) { add(flag, std::to_string(value)); }
  std::string text(const std::string& command) const;

 private:
  std::vector<std::string> lines_;
};

// The TrainingArguments (and TRL ModelConfig) flags of the run: model, batch, sequence length,
// precision flag, recomputation, LoRA / QLoRA, attention. `recompute_flag`: whether
// --gradient_checkpointing says the recomputation (accelerate's FSDP says it itself).
Result<FlagLines> trainer_flags(const std::string& format, const Scenario& s,
                                hf::Precision precision, bool recompute_flag);

// GPUs per node and nodes for a world of `world` ranks (nodes of 8 when it divides).
std::pair<int64_t, int64_t> nodes_of(int64_t world);

}  // namespace vramplan::interop::hf_emit
