// The architecture of a decoder-only transformer, as read from a Hugging Face config.json or
// given field by field. Only structure lives here: sizes, which optional parts exist, and which
// layers are MoE or sliding-window. Counting and memory live elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vramplan {

enum class MlpKind { kGated, kPlain };          // SwiGLU/GeGLU: gate+up+down; GeLU: up+down
enum class NormKind { kRmsNorm, kLayerNorm };   // LayerNorm carries a bias (2 params per channel)
enum class AttentionKind { kStandard, kMla };   // MHA/GQA/MQA, or DeepSeek's multi-head latent
enum class LayerAttention { kFull, kSliding };  // sliding layers attend to a window only

// DeepSeek-V2/V3 multi-head latent attention. q_lora_rank == 0 means q is projected directly.
struct MlaConfig {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// Mixture of experts. num_experts == 0 means a dense model.
struct MoeConfig {
  int64_t num_experts = 0;              // routed experts E
  int64_t top_k = 0;                    // experts per token k
  int64_t expert_ffn = 0;               // intermediate width of one routed expert f_e
  int64_t shared_experts = 0;           // number of always-active shared experts
  int64_t shared_expert_ffn = 0;        // intermediate width of ONE shared expert
  bool router_bias = false;             // router linear has a bias (gpt-oss)
  bool expert_bias = false;             // expert linears have biases (gpt-oss)
  bool router_correction_bias = false;  // DeepSeek-V3 e_score_correction_bias (E per layer)
};

struct ModelConfig {
  std::string name;        // preset name or file the config came from
  std::string model_type;  // Hugging Face model_type, e.g. "llama", "deepseek_v3"

  int64_t hidden = 0;        // h
  int64_t num_layers = 0;    // L (decoder layers, excluding MTP)
  int64_t num_heads = 0;     // a
  int64_t num_kv_heads = 0;  // g
  int64_t head_dim = 0;      // d (need not equal h/a)
  int64_t ffn = 0;           // dense intermediate width f
  int64_t vocab = 0;         // V
  int64_t max_position_embeddings = 0;
  bool tied_embeddings = false;

  MlpKind mlp = MlpKind::kGated;
  NormKind norm = NormKind::kRmsNorm;
  int64_t norms_per_layer = 2;  // 2 for pre-norm; 4 for Gemma-2/3 sandwich norms
  bool final_norm = true;
  bool learned_position_embeddings = false;  // GPT-2 wpe
  bool qkv_bias = false;                     // Qwen2, gpt-oss, GPT-2
  bool attn_out_bias = false;                // gpt-oss, GPT-2
  bool mlp_bias = false;                     // GPT-2
  bool qk_norm = false;                      // per-head q/k RMSNorm of width d (Qwen3, Gemma-3)
  bool qk_norm_full_width = false;           // OLMo-2: q_norm over a·d and k_norm over g·d
  bool attention_sinks = false;              // gpt-oss: one learned sink logit per head

  AttentionKind attention = AttentionKind::kStandard;
  MlaConfig mla;
  MoeConfig moe;
  std::vector<bool> moe_layers;                 // size num_layers; true where the MLP is MoE
  std::vector<LayerAttention> layer_attention;  // size num_layers
  int64_t sliding_window = 0;                   // tokens; 0 when no sliding layers
  int64_t mtp_layers = 0;  // DeepSeek-V3 multi-token-prediction modules (num_nextn_predict_layers)

  bool is_moe() const { return moe.num_experts > 0; }
};

}  // namespace vramplan
