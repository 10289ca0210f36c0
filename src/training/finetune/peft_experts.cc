#include "training/finetune/peft_experts.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace vramplan {
namespace {

// transformers 5.24 conversion_mapping.py _MODEL_TO_CONVERSION_PATTERN entries whose pattern is
// "mixtral" or "qwen2_moe" (plus those two), the types PEFT's _convert_peft_config_moe handles.
constexpr std::string_view kConvertedTypes[] = {"mixtral",
                                                "minimax",
                                                "minimax_m2",
                                                "qwen2_moe",
                                                "qwen3_moe",
                                                "afmoe",
                                                "deepseek_v2",
                                                "deepseek_v3",
                                                "deepseek_v32",
                                                "dots1",
                                                "ernie4_5_moe",
                                                "glm4_moe",
                                                "glm4_moe_lite",
                                                "glm_moe_dsa",
                                                "glm4v_moe",
                                                "longcat_flash",
                                                "solar_open",
                                                "mellum",
                                                "beam",
                                                "qwen3_omni_moe",
                                                "qwen3_next",
                                                "hunyuan_v1_moe",
                                                "flex_olmo",
                                                "olmoe",
                                                "sarvam_mla",
                                                "exaone_moe",
                                                "cohere2_moe",
                                                "qwen3_omni_moe_text",
                                                "qwen3_omni_moe_thinker"};

}  // namespace

ExpertAdapters expert_adapters(const ModelConfig& model, ModelCode code) {
  if (code != ModelCode::kTransformers) return ExpertAdapters::kPerExpert;
  // Kimi-K2 runs its own remote code (DeepseekV3 with one nn.Linear per expert).
  if (model.model_type == "kimi_k2") return ExpertAdapters::kPerExpert;
  const bool converted = std::find(std::begin(kConvertedTypes), std::end(kConvertedTypes),
                                   std::string_view(model.model_type)) != std::end(kConvertedTypes);
  return converted ? ExpertAdapters::kStacked : ExpertAdapters::kNone;
}

bool targets_all_linear(uint32_t lora_targets) {
  return (lora_targets & kLoraAllLinear) == kLoraAllLinear;
}

}  // namespace vramplan
