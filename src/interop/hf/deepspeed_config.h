// A DeepSpeed config (deepspeed.ai/docs/config-json) as a run's settings: the ZeRO stage and its
// buckets and live parameters, precision, batch sizes, the optimizer, offload (not modelled: a
// warning), with the HF Trainer's "auto" values taken from the TrainingArguments given beside it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "interop/hf/doc_keys.h"
#include "interop/hf/hf_common.h"
#include "interop/hf/training_args.h"

namespace vramplan::interop::hf {

struct DeepspeedContext {
  const TrainerArgs* trainer = nullptr;    // the TrainingArguments beside it (nullptr: none)
  const nlohmann::json* beside = nullptr;  // the settings given beside the text
};

struct DeepspeedFacts {
  // The precision the config (or the Trainer, for "auto") sets; nullopt when "auto" is left
  // unresolved without TrainingArguments.
  std::optional<Precision> precision;
  std::string precision_key, precision_value;
  bool has_optimizer = false;  // an optimizer block (else the Trainer's optim builds one)
  // data_types.grad_accum_dtype, to set over the precision's gradient accumulation.
  std::optional<bool> fp32_grad_accum;
  std::string fp32_grad_accum_key, fp32_grad_accum_value;
};

// Whether `doc` is a DeepSpeed config: it has a key only DeepSpeed configs have.
bool looks_like_deepspeed_config(const nlohmann::json& doc);

// Reads the config into `out` (its batch keys checked against what `out` already holds from
// the TrainingArguments and the launcher); the precision is returned for the caller to set.
Result<DeepspeedFacts> read_deepspeed_config(DocKeys& keys, const DeepspeedContext& ctx,
                                             ImportBuilder& out);

}  // namespace vramplan::interop::hf
