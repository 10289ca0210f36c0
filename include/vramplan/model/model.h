// The architecture of a decoder-only transformer, as read from a Hugging Face config.json or
// given field by field. Only structure lives here: sizes, which optional parts exist, and which
// layers are MoE or sliding-window. Counting and memory live elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/model/vision_shape.h"

namespace vramplan {

enum class MlpKind { kGated, kPlain };          // SwiGLU/GeGLU: gate+up+down; GeLU: up+down
enum class NormKind { kRmsNorm, kLayerNorm };   // LayerNorm carries a bias (2 params per channel)
enum class AttentionKind { kStandard, kMla };   // MHA/GQA/MQA, or DeepSeek's multi-head latent
enum class LayerAttention { kFull, kSliding };  // sliding layers attend to a window only
// What mixes tokens in a layer: softmax attention, a Mamba-2 selective-state-space mixer
// (Nemotron-H, Granite-4.0-H, Falcon-H1), a gated DeltaNet linear-attention mixer (Qwen3-Next),
// nothing (Nemotron-H's MLP-only and MoE-only blocks), or gated cross-attention to the image
// tokens (Llama-3.2-Vision's cross_attention_layers). Jamba's Mamba-1 layers are kMamba2 with
// Mamba2Config::dt_rank > 0.
enum class LayerMixer { kAttention, kMamba2, kGatedDeltaNet, kNone, kCrossAttention };

// A Mamba-2 mixer (transformers NemotronHMamba2Mixer / GraniteMoeHybridMambaLayer /
// FalconH1Mixer): in_proj h -> 2·d_inner + 2·G·N + H, a depthwise conv1d over conv_dim =
// d_inner + 2·G·N channels, dt_bias, A_log and D per head, a gated RMSNorm over d_inner and
// out_proj d_inner -> h. d_inner = num_heads · head_dim.
struct Mamba2Config {
  int64_t num_heads = 0;   // H (mamba_num_heads / mamba_n_heads)
  int64_t head_dim = 0;    // P (mamba_head_dim / mamba_d_head)
  int64_t state_size = 0;  // N (ssm_state_size / mamba_d_state)
  int64_t n_groups = 1;    // G (n_groups / mamba_n_groups)
  int64_t conv_kernel = 4;
  bool conv_bias = true;       // use_conv_bias / mamba_conv_bias
  bool proj_bias = false;      // use_bias / mamba_proj_bias: in_proj and out_proj biases
  bool gated_norm = true;      // the RMSNormGated over d_inner (Falcon-H1: mamba_rms_norm)
  bool out_proj_bias = false;  // out_proj's bias (proj_bias; Falcon-H1: projectors_bias)
  // > 0: a Mamba-1 selective-scan mixer (Jamba) with a dt projection of this rank. It is held
  // as H = d_inner heads of width 1, G = 0 groups, so that d_inner, conv_dim and the state
  // H·P·N per sequence are Mamba-1's: in_proj h -> 2·d_inner, conv1d d_inner·K, x_proj
  // d_inner -> R + 2N, dt_proj R -> d_inner (bias), A_log d_inner·N, D d_inner, out_proj, and
  // Jamba's dt/B/C RMSNorms (R + 2N).
  int64_t dt_rank = 0;
  int64_t d_inner() const { return num_heads * head_dim; }
  int64_t conv_dim() const { return d_inner() + 2 * n_groups * state_size; }
};

// Qwen3-Next's gated DeltaNet (Qwen3NextGatedDeltaNet): in_proj_qkvz h -> 2·k + 2·v,
// in_proj_ba h -> 2·Hv, conv1d over 2·k + v channels (no bias), dt_bias and A_log per value
// head, a gated RMSNorm of one value head and out_proj v -> h; k = Hk·dk, v = Hv·dv.
struct GatedDeltaNetConfig {
  int64_t num_k_heads = 0;  // linear_num_key_heads
  int64_t num_v_heads = 0;  // linear_num_value_heads
  int64_t k_head_dim = 0;   // linear_key_head_dim
  int64_t v_head_dim = 0;   // linear_value_head_dim
  int64_t conv_kernel = 4;  // linear_conv_kernel_dim
  int64_t key_dim() const { return num_k_heads * k_head_dim; }
  int64_t value_dim() const { return num_v_heads * v_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
};

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
  bool shared_expert_gate = false;      // Qwen2-MoE/Qwen3-Next: a Linear(h, 1) gates the shared
                                        // expert
  // Group-limited routing (DeepSeek-V2/V3 n_group/topk_group, Megatron --moe-router-num-groups /
  // --moe-router-group-topk): the experts form router_groups equal groups and each token picks
  // its experts from router_group_top_k of them. 0: no limit. Parameters do not change; the
  // step time's deduplicating dispatchers send to fewer ranks.
  int64_t router_groups = 0;
  int64_t router_group_top_k = 0;
};

// DeepSeek-V3.2's lightning indexer (DeepSeek Sparse Attention), per layer: wq_b
// q_lora_rank -> H_i·d_i, wk h -> d_i, k_norm (LayerNorm, weight and bias) d_i, weights_proj
// h -> H_i. It caches one d_i-wide key per token beside the MLA latent.
struct IndexerConfig {
  int64_t num_heads = 0;  // index_n_heads
  int64_t head_dim = 0;   // index_head_dim
  int64_t top_k = 0;      // index_topk: tokens each query attends to
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

  // Hybrid models. layer_mixer (size num_layers) says what mixes tokens in each layer; empty
  // means attention everywhere. layer_has_mlp (size num_layers; empty = every layer) is false
  // for Nemotron-H's mixer-only blocks.
  std::vector<LayerMixer> layer_mixer;
  std::vector<bool> layer_has_mlp;
  Mamba2Config mamba;
  GatedDeltaNetConfig deltanet;
  IndexerConfig indexer;               // num_heads == 0: no sparse-attention indexer
  bool attention_output_gate = false;  // Qwen3-Next: q_proj also yields a sigmoid gate (a·d)
  // Falcon-H1: every attention layer also runs a Mamba-2 mixer in parallel (both read the same
  // normed input); the layer holds a KV cache and a Mamba state.
  bool parallel_mamba = false;
  int64_t mlp_activation_params = 0;  // Apertus xIELU: alpha_p and alpha_n per MLP
  int64_t extra_embedding_rows = 0;   // Llama-3.2-Vision: embed_tokens has vocab + 8 rows
  // Parameters outside the decoder that transformers builds for the checkpoint (a vision tower
  // and its projector); counted by the family reader, listed apart in the breakdown.
  int64_t vision_params = 0;
  // How the tower turns images into tokens and its encoder's layers (--images); unknown when
  // the reader counts no tower.
  VisionShape vision;

  LayerMixer mixer(size_t layer) const {
    return layer < layer_mixer.size() ? layer_mixer[layer] : LayerMixer::kAttention;
  }
  bool has_mlp(size_t layer) const { return layer >= layer_has_mlp.size() || layer_has_mlp[layer]; }
  bool is_hybrid() const {
    for (LayerMixer k : layer_mixer)
      if (k != LayerMixer::kAttention) return true;
    return false;
  }

  bool is_moe() const { return moe.num_experts > 0; }
};

}  // namespace vramplan
