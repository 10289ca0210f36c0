// What the Hugging Face training stack's formats share (TrainingArguments, DeepSpeed, accelerate,
// axolotl, torchtune): the model a name means, LoRA target modules, optimizer names, precision
// modes, and settings that several keys of one run may set (which must then agree).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interop/import_builder.h"
#include "vramplan/model/precision.h"

namespace vramplan::interop::hf {

// vramplan's framework names for the stacks (vramplan/training/frameworks.h).
inline constexpr const char* kDeepspeedFramework = "deepspeed";
inline constexpr const char* kHfTrainerFramework = "hf-trainer";

// `name` (a Hub id, a preset name or a local checkpoint directory) as vramplan's model setting:
// the preset's name when a preset has that name or Hub id, a directory's config.json, else the
// Hub id as written (the Hub client fetches its config.json).
void set_model(ImportBuilder& out, std::string_view key, const std::string& name);

// The hidden size of the preset `model` names, or 0 (a Hub id that is no preset, a path).
int64_t preset_hidden_size(const nlohmann::json& model);

// A list written as a YAML/JSON list or as one string of names separated by commas or spaces.
std::vector<std::string> name_list(const nlohmann::json& value);

// LoRA target modules as PEFT, TRL, axolotl and torchtune name them (q_proj ... down_proj,
// torchtune's output_proj / w1 / w2 / w3, "all-linear") as vramplan's lora_targets text;
// `unknown` lists the names that are no projection vramplan places adapters on.
struct LoraTargets {
  std::string text;  // "q,k,v,o" ("" when none is known)
  std::vector<std::string> unknown;
};
LoraTargets lora_targets_of(const std::vector<std::string>& modules);
// The targets as PEFT module names: "all-linear", or q_proj ... down_proj.
std::vector<std::string> peft_module_names(uint32_t targets);

// An optimizer as vramplan sets it: the optimizer, and where it says so the dtype of its states
// and whether torch's foreach implementation allocates a temporary at the step.
struct OptimizerChoice {
  std::string optimizer;             // vramplan's name (kOptimizerNames)
  std::optional<bool> foreach_temp;  // optimizer_foreach_temporaries, when the name decides it
  std::optional<std::string> state_dtype;  // optimizer_dtype, when the name decides it
  std::string note;                        // how it was read: "bitsandbytes 8-bit AdamW"
  std::string unmodelled;                  // what vramplan does not count ("" when all is)
};
// The HF Trainer's `optim` names (transformers OptimizerNames); nullopt when unknown.
std::optional<OptimizerChoice> hf_optimizer(std::string_view name);
// The HF Trainer's optim names vramplan reads, for errors.
const char* hf_optimizer_names();
// Sets the choice as read from `key` = `value` (a warning where part of it is not modelled).
void set_optimizer(ImportBuilder& out, std::string_view key, std::string_view value,
                   const OptimizerChoice& choice);

// How a stack keeps its weights when it trains in a precision.
enum class Precision { kFp32, kBf16, kFp16 };
enum class Weights {
  kMaster,    // DeepSpeed: weights in the compute dtype, an fp32 master copy in the optimizer
  kAutocast,  // HF Trainer, accelerate: fp32 weights, torch.autocast computes in the dtype
  kPure,      // axolotl, torchtune: weights, gradients and optimizer states in the dtype
};
struct PrecisionPlan {
  DType param, grad, activation, optimizer;
  bool master_weights, fp32_grad_accum;
};
PrecisionPlan precision_plan(Precision precision, Weights weights);
const char* precision_name(Precision precision);  // "bf16", "fp16", "fp32"
DType precision_dtype(Precision precision);
// Sets param_dtype, grad_dtype, activation_dtype, optimizer_dtype, master_weights and
// fp32_grad_accum for `precision` kept as `weights`, as read from `key` = `value`.
void set_precision(ImportBuilder& out, std::string_view key, std::string_view value,
                   Precision precision, Weights weights);
// "bfloat16" / "bf16" / "torch.bfloat16" ... as a precision; nullopt when none.
std::optional<Precision> precision_of_dtype(std::string_view dtype);

// `setting` = `value` from `key`, unless another key already set it to something else: then an
// error naming `key`, the value and the key it contradicts.
std::optional<Error> set_agreeing(ImportBuilder& out, std::string_view key, std::string_view value,
                                  const std::string& setting, const nlohmann::json& json_value);

// A value read as a boolean or number, or `fallback` when it is none.
bool bool_or(const nlohmann::json& value, bool fallback);
double number_or(const nlohmann::json& value, double fallback);

// A count written as 8, "8", 5e8 or "5e8" (DeepSpeed's bucket sizes); errors name `key`.
Result<int64_t> count_value(std::string_view key, const nlohmann::json& value);

}  // namespace vramplan::interop::hf
