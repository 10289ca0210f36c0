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
  kOlmo3,          // OLMo-2's layout with sliding-window layers (layer_types)
  kSmolLM3,        // Llama layout, tied by default
  kSeedOss,        // Llama layout with q/k/v biases (attention_bias) and no o_proj bias
  kHunyuan,        // hunyuan_v1_dense: Llama layout with per-head query/key layernorms
  kGlm4Moe,        // GLM-4.5: DeepSeek-V3-style MoE over GQA attention with q/k/v biases
  kMiniMaxM2,      // MiniMax-M2: full-width q/k norms, 256 experts with a sigmoid router's bias
  kErnie45Moe,     // ERNIE-4.5 MoE: shared experts, dense first layers, tied embeddings
  kQwen3Next,      // gated DeltaNet + gated attention hybrid, high-sparsity MoE
  kNemotronH,      // Mamba-2 / attention / MLP / MoE blocks by hybrid_override_pattern
  kGraniteHybrid,  // granitemoehybrid: Mamba-2 or attention, then MoE + shared MLP
  kHunyuanMoe,     // hunyuan_v1_moe: every layer MoE plus a shared MLP, per-head q/k norms
  kApertus,        // Apertus: plain up/down MLP with the xIELU activation, per-head q/k norms
  kJamba,          // Jamba: Mamba-1 or attention layers, MoE every expert_layer_period
  kFalconH1,       // Falcon-H1: attention and Mamba-2 side by side in every layer
  kLlama4,         // Llama 4: interleaved MoE with a shared expert, chunked-attention layers
  kMllama,         // Llama-3.2-Vision: self-attention and gated cross-attention layers
  kMegatron,       // megatron_config.h: a Megatron-LM GPT by its own arguments
  kUnknown,
};

Family family_of(std::string_view type);

// Multimodal wrappers whose language model sits in text_config: the family of the text model
// (from text_config.model_type, or the wrapper's own when that is absent), or kUnknown when the
// type is not such a wrapper.
bool is_multimodal_wrapper(std::string_view type);
Family text_family_of(std::string_view wrapper, std::string_view text_type);

// Gemma3TextConfig defaults: the multimodal gemma3 files omit every text_config key that equals
// its default (vocab_size among them), so they must be supplied here.
const nlohmann::json& gemma3_text_defaults();
// The defaults of a nested text_config's own config class (mistral, llama), or nullptr.
const nlohmann::json* text_config_defaults(std::string_view text_type);

// transformers' tie_word_embeddings default per family (PretrainedConfig says true; most decoder
// configs override it to false).
bool ties_by_default(Family family);

// Families whose attention projections take their biases from config.attention_bias (q, k, v
// and o alike). Mistral, Mixtral and Phi-3 hard-code no bias; Qwen2 hard-codes q/k/v bias.
bool honors_attention_bias(Family family);

}  // namespace vramplan::hf
