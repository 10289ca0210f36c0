// How PEFT's LoRA meets a model's routed experts. Transformers 5 stores each MoE layer's experts
// as stacked 3-D parameters (experts.gate_up_proj E × 2f × h, experts.down_proj E × h × f), not
// as one nn.Linear per expert. PEFT 0.18+ (utils/transformers_weight_conversion.py) maps the
// targets a transformers-4 config named (w1/w3/w2, gate_proj/up_proj/down_proj, and the router
// "gate" that all-linear matched) onto those parameters for the model types transformers
// converts (conversion_mapping.py: Mixtral-style and Qwen2-MoE-style); each becomes a
// lora.ParamWrapper. Other MoE types keep their experts out of reach of target_modules.
#pragma once

#include <cstdint>

#include "vramplan/training/scenario.h"

namespace vramplan {

enum class ExpertAdapters {
  kPerExpert,  // one adapter per expert's linear (transformers 4, Megatron, torchtitan)
  kStacked,    // PEFT ParamWrapper over the stacked experts (transformers 5, converted types)
  kNone,       // transformers 5, a type PEFT does not convert: experts get no adapter
};

ExpertAdapters expert_adapters(const ModelConfig& model, ModelCode code);

// PEFT's all-linear, which on a converted type also wraps the router ("gate"): all seven
// projection names.
bool targets_all_linear(uint32_t lora_targets);

}  // namespace vramplan
