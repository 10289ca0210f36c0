#include "model/families.h"

#include <map>

namespace vramplan::hf {

using nlohmann::json;

Family family_of(std::string_view type) {
  static const std::map<std::string_view, Family> kFamilies = {
      {"llama", Family::kLlama},
      {"mistral", Family::kMistral},
      {"mixtral", Family::kMixtral},
      {"qwen2", Family::kQwen2},
      {"qwen3", Family::kQwen3},
      {"qwen3_moe", Family::kQwen3Moe},
      {"deepseek_v2", Family::kDeepseek},
      {"deepseek_v3", Family::kDeepseek},
      {"gemma2", Family::kGemma2},
      {"gemma3", Family::kGemma3},
      {"gemma3_text", Family::kGemma3},
      {"phi3", Family::kPhi3},
      {"gpt2", Family::kGpt2},
      {"gpt_oss", Family::kGptOss},
      {"olmo2", Family::kOlmo2},
      {"olmo3", Family::kOlmo3},
      {"smollm3", Family::kSmolLM3},
      {"seed_oss", Family::kSeedOss},
      {"hunyuan_v1_dense", Family::kHunyuan},
      {"glm4_moe", Family::kGlm4Moe},
      {"minimax_m2", Family::kMiniMaxM2},
      {"ernie4_5_moe", Family::kErnie45Moe},
      {"kimi_k2", Family::kDeepseek},       // Kimi-K2 ships DeepseekV3ForCausalLM
      {"deepseek_v32", Family::kDeepseek},  // V3 plus the lightning indexer
      {"qwen3_next", Family::kQwen3Next},
      {"nemotron_h", Family::kNemotronH},
      {"granitemoehybrid", Family::kGraniteHybrid},
      {"mistral3", Family::kMistral},  // text_config: a Mistral decoder
      {"llava_next", Family::kLlama},  // text_config: its own model_type
      {"qwen2_5_vl", Family::kQwen2},  // the language model is Qwen2's
      {"qwen2_5_vl_text", Family::kQwen2},
      {"qwen3_vl", Family::kQwen3},
      {"qwen3_vl_text", Family::kQwen3},
      {"qwen3_vl_moe", Family::kQwen3Moe},
      {"qwen3_vl_moe_text", Family::kQwen3Moe},
      {"hunyuan_v1_moe", Family::kHunyuanMoe},
      {"apertus", Family::kApertus},
      {"jamba", Family::kJamba},
      {"falcon_h1", Family::kFalconH1},
      {"llama4", Family::kLlama4},
      {"llama4_text", Family::kLlama4},
      {"mllama", Family::kMllama},
      {"mllama_text_model", Family::kMllama},
      {"megatron_gpt", Family::kMegatron},
  };
  auto it = kFamilies.find(type);
  return it == kFamilies.end() ? Family::kUnknown : it->second;
}

bool is_multimodal_wrapper(std::string_view type) {
  return type == "gemma3" || type == "mistral3" || type == "llava_next" || type == "qwen2_5_vl" ||
         type == "qwen3_vl" || type == "qwen3_vl_moe" || type == "llama4" || type == "mllama";
}

Family text_family_of(std::string_view wrapper, std::string_view text_type) {
  if (!text_type.empty()) {
    Family family = family_of(text_type);
    if (family != Family::kUnknown) return family;
  }
  return family_of(wrapper);
}

// Gemma3TextConfig defaults: the multimodal gemma3 files omit every text_config key that equals
// its default (vocab_size among them), so they must be supplied here.
const json& gemma3_text_defaults() {
  static const json kDefaults = {
      {"vocab_size", 262208},      {"hidden_size", 2304},
      {"intermediate_size", 9216}, {"num_hidden_layers", 26},
      {"num_attention_heads", 8},  {"num_key_value_heads", 4},
      {"head_dim", 256},           {"max_position_embeddings", 131072},
      {"sliding_window", 4096},    {"sliding_window_pattern", 6},
  };
  return kDefaults;
}

// A wrapper's text_config built by its model_type's config class (LlavaNextConfig passes the
// dict to CONFIG_MAPPING[text_config.model_type], "llama" when absent): MistralConfig's and
// LlamaConfig's defaults for the keys a published file leaves out. sliding_window is left out on
// purpose: an explicit null (no window) must not fall back to Mistral's 4096.
const json* text_config_defaults(std::string_view text_type) {
  static const json kMistral = {
      {"vocab_size", 32000},
      {"hidden_size", 4096},
      {"intermediate_size", 14336},
      {"num_hidden_layers", 32},
      {"num_attention_heads", 32},
      {"num_key_value_heads", 8},
      {"max_position_embeddings", 131072},
  };
  static const json kLlama = {
      {"vocab_size", 32000},     {"hidden_size", 4096},       {"intermediate_size", 11008},
      {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"max_position_embeddings", 2048},
  };
  if (text_type == "mistral") return &kMistral;
  if (text_type == "llama" || text_type.empty()) return &kLlama;
  return nullptr;
}

// transformers' tie_word_embeddings default per family (PretrainedConfig says true; most decoder
// configs override it to false).
bool ties_by_default(Family family) {
  return family == Family::kGemma2 || family == Family::kGemma3 || family == Family::kGpt2 ||
         family == Family::kSmolLM3 || family == Family::kErnie45Moe || family == Family::kHunyuan;
}

// Families whose attention projections take their biases from config.attention_bias (q, k, v
// and o alike). Mistral, Mixtral and Phi-3 hard-code no bias; Qwen2 hard-codes q/k/v bias.
bool honors_attention_bias(Family family) {
  switch (family) {
    case Family::kLlama:
    case Family::kQwen3:
    case Family::kQwen3Moe:
    case Family::kDeepseek:
    case Family::kGemma2:
    case Family::kGemma3:
    case Family::kGptOss:
    case Family::kOlmo2:
    case Family::kOlmo3:
    case Family::kSmolLM3:
    case Family::kHunyuan:
    case Family::kQwen3Next:
    case Family::kNemotronH:
    case Family::kGraniteHybrid:
    case Family::kHunyuanMoe:
    case Family::kApertus:
    case Family::kFalconH1:
    case Family::kLlama4:
    case Family::kUnknown:
      return true;
    default:
      return false;
  }
}

}  // namespace vramplan::hf
