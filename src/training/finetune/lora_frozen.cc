// What transformers' model code keeps under a LoRA base frozen by PEFT, and where torch.autocast
// leaves its experts: the predicates activations.cc asks (declared in activations.h;
// docs/frameworks.md).
#include <string>

#include "training/activations.h"
#include "training/finetune/peft_experts.h"

namespace vramplan {

bool lora_frozen_base(const Scenario& s) {
  // torchtune's LoRALinear runs its frozen base as F.linear (or linear_nf4) beside lora_a, as
  // PEFT does (torchtune/modules/peft/lora.py).
  return s.finetune.method != FinetuneMethod::kNone &&
         (s.conventions.model_code == ModelCode::kTransformers ||
          s.conventions.model_code == ModelCode::kTorchtune);
}

bool lora_frozen_layer(const Scenario& s, bool /*moe_layer*/) {
  const std::string& type = s.model.model_type;
  return lora_frozen_base(s) &&
         (s.model.attention == AttentionKind::kStandard ||
          s.model.attention == AttentionKind::kMla) &&
         type != "gpt2";
}

bool lora_frozen_experts(const Scenario& s) {
  if (!lora_frozen_base(s)) return false;
  const ExpertAdapters experts = expert_adapters(s.model, s.conventions.model_code);
  return experts == ExpertAdapters::kNone ||
         (experts == ExpertAdapters::kStacked &&
          (s.finetune.lora_targets & (kLoraGate | kLoraUp | kLoraDown)) == 0);
}

bool autocast_keeps_experts_in_param_dtype(const Scenario& s) {
  return s.model.is_moe() && s.conventions.autocast_weight_cache &&
         s.training.param_dtype != s.training.activation_dtype &&
         s.conventions.model_code == ModelCode::kTransformers &&
         expert_adapters(s.model, ModelCode::kTransformers) != ExpertAdapters::kPerExpert;
}

bool adapter_keeps_input(const Scenario& s, uint32_t projections) {
  return s.finetune.adapter_dtype == s.training.activation_dtype &&
         (s.finetune.lora_targets & projections) != 0;
}

}  // namespace vramplan
