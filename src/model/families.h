// The model families vramplan reads exactly: config.json's model_type mapped to what transformers
// instantiates for it, with the family's defaults where a file omits a key.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace vramplan::hf {

enum class Family {
  kLlama,
  kMistral,
  kMixtral,
  kQwen2,
  kQwen3,
  kQwen3Moe,
  kDeepseek,
  kGemma2,
  kGemma3,
  kPhi3,
  kGpt2,
  kGptOss,
  kOlmo2,
  kMegatron,  // megatron_config.h: a Megatron-LM GPT by its own arguments
  kUnknown,
};

Family family_of(std::string_view type);

// Gemma3TextConfig defaults: the multimodal gemma3 files omit every text_config key that equals
// its default (vocab_size among them), so they must be supplied here.
const nlohmann::json& gemma3_text_defaults();

// transformers' tie_word_embeddings default per family (PretrainedConfig says true; most decoder
// configs override it to false).
bool ties_by_default(Family family);

// Families whose attention projections take their biases from config.attention_bias (q, k, v
// and o alike). Mistral, Mixtral and Phi-3 hard-code no bias; Qwen2 hard-codes q/k/v bias.
bool honors_attention_bias(Family family);

}  // namespace vramplan::hf
