// Exact parameter counts, module by module as transformers builds them. Every term below names
// the nn.Linear / norm / nn.Parameter it stands for, so a count can be checked against the
// model's state_dict.
#include "vramplan/model/params.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vramplan {
namespace {

// RMSNorm has a weight per channel; LayerNorm adds a bias.
int64_t norm_params(const ModelConfig& m, int64_t width) {
  return m.norm == NormKind::kLayerNorm ? 2 * width : width;
}

// One MLP of intermediate width `ffn`: gate+up+down (gated) or up+down (plain), with biases on
// every projection when `bias` (the up/gate biases have ffn entries, the down bias h).
int64_t mlp_params(const ModelConfig& m, int64_t ffn, bool bias) {
  int64_t projections = m.mlp == MlpKind::kGated ? 3 : 2;
  int64_t params = projections * m.hidden * ffn;
  if (bias) params += (projections - 1) * ffn + m.hidden;
  return params;
}

// Standard multi-head attention with a query heads and g key/value heads of width d.
void add_standard_attention(const ModelConfig& m, LayerParams& layer) {
  int64_t q_width = m.num_heads * m.head_dim;
  int64_t kv_width = m.num_kv_heads * m.head_dim;
  layer.attention += m.hidden * (q_width + 2 * kv_width);              // q_proj, k_proj, v_proj
  if (m.attention_output_gate) layer.attention += m.hidden * q_width;  // q_proj's gate half
  layer.attention += q_width * m.hidden;                               // o_proj
  if (m.qkv_bias) layer.attention += q_width + 2 * kv_width;
  if (m.qk_norm) layer.attention_replicated += 2 * norm_params(m, m.head_dim);
  if (m.qk_norm_full_width) {
    layer.attention_replicated += norm_params(m, q_width) + norm_params(m, kv_width);
  }
}

// DeepSeek multi-head latent attention. The low-rank down projections (q_a_proj,
// kv_a_proj_with_mqa) and their norms are replicated under TP; the up projections and o_proj are
// sharded by head. qkv_bias here is config.attention_bias, which transformers applies to the two
// down projections (q_proj, q_b_proj and kv_b_proj never have a bias).
void add_mla_attention(const ModelConfig& m, LayerParams& layer) {
  const MlaConfig& mla = m.mla;
  int64_t qk_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  int64_t kv_down = mla.kv_lora_rank + mla.qk_rope_head_dim;
  if (mla.q_lora_rank > 0) {
    layer.attention_replicated += m.hidden * mla.q_lora_rank;  // q_a_proj
    if (m.qkv_bias) layer.attention_replicated += mla.q_lora_rank;
    layer.attention_replicated += norm_params(m, mla.q_lora_rank);  // q_a_layernorm
    layer.attention += mla.q_lora_rank * m.num_heads * qk_dim;      // q_b_proj
  } else {
    layer.attention += m.hidden * m.num_heads * qk_dim;  // q_proj
  }
  layer.attention_replicated += m.hidden * kv_down;  // kv_a_proj_with_mqa
  if (m.qkv_bias) layer.attention_replicated += kv_down;
  layer.attention_replicated += norm_params(m, mla.kv_lora_rank);  // kv_a_layernorm
  layer.attention +=
      mla.kv_lora_rank * m.num_heads * (mla.qk_nope_head_dim + mla.v_head_dim);  // kv_b_proj
  layer.attention += m.num_heads * mla.v_head_dim * m.hidden;                    // o_proj
}

void add_attention(const ModelConfig& m, LayerParams& layer) {
  if (m.attention == AttentionKind::kMla) {
    add_mla_attention(m, layer);
  } else {
    add_standard_attention(m, layer);
  }
  // o_proj's bias is added after the TP all-reduce, so every rank holds all of it.
  if (m.attn_out_bias) layer.attention_replicated += m.hidden;
  if (m.attention_sinks) layer.attention_replicated += m.num_heads;  // one logit per head
}

// A Mamba-2 mixer: in_proj h -> 2·d_inner + 2·G·N + H (z, x|B|C, dt), conv1d conv_dim·K (+bias),
// dt_bias, A_log, D (H each), the gated RMSNorm (d_inner) and out_proj d_inner -> h.
void add_mamba2(const ModelConfig& m, LayerParams& layer) {
  const Mamba2Config& c = m.mamba;
  if (c.dt_rank > 0) {
    // Mamba-1 (JambaMambaMixer): in_proj h -> 2·d_inner, x_proj d_inner -> R + 2N, dt_proj
    // R -> d_inner with bias, out_proj; conv1d d_inner·K (+bias), A_log d_inner·N, D d_inner and
    // the dt/B/C RMSNorms R + 2N.
    const int64_t d = c.d_inner(), n = c.state_size, r = c.dt_rank;
    layer.ssm += m.hidden * 2 * d + d * (r + 2 * n) + r * d + d * m.hidden;
    if (c.proj_bias) layer.ssm += 2 * d;
    if (c.out_proj_bias) layer.ssm += m.hidden;
    layer.ssm_small += d * c.conv_kernel + (c.conv_bias ? d : 0) + d + d * n + d + r + 2 * n;
    return;
  }
  const int64_t in_width = 2 * c.d_inner() + 2 * c.n_groups * c.state_size + c.num_heads;
  layer.ssm += m.hidden * in_width + c.d_inner() * m.hidden;  // in_proj, out_proj
  if (c.proj_bias) layer.ssm += in_width;
  if (c.out_proj_bias) layer.ssm += m.hidden;
  layer.ssm_small += c.conv_dim() * c.conv_kernel + (c.conv_bias ? c.conv_dim() : 0);
  layer.ssm_small += 3 * c.num_heads;  // dt_bias, A_log, D
  if (c.gated_norm) layer.ssm_small += c.d_inner();
}

// Qwen3-Next's gated DeltaNet: in_proj_qkvz h -> 2k + 2v, in_proj_ba h -> 2·Hv, out_proj v -> h;
// conv1d (2k + v)·K without bias, dt_bias and A_log per value head, RMSNormGated(dv).
void add_deltanet(const ModelConfig& m, LayerParams& layer) {
  const GatedDeltaNetConfig& c = m.deltanet;
  layer.ssm += m.hidden * (2 * c.key_dim() + 2 * c.value_dim());  // in_proj_qkvz
  layer.ssm += m.hidden * 2 * c.num_v_heads;                      // in_proj_ba
  layer.ssm += c.value_dim() * m.hidden;                          // out_proj
  layer.ssm_small += c.conv_dim() * c.conv_kernel + 2 * c.num_v_heads + c.v_head_dim;
}

// DeepSeek-V3.2's indexer: wq_b q_lora -> H_i·d_i, wk h -> d_i, k_norm (LayerNorm) 2·d_i,
// weights_proj h -> H_i (DeepseekV32 Indexer in vLLM / the release's inference/model.py).
void add_indexer(const ModelConfig& m, LayerParams& layer) {
  const IndexerConfig& c = m.indexer;
  if (c.num_heads == 0) return;
  layer.indexer = m.mla.q_lora_rank * c.num_heads * c.head_dim + m.hidden * c.head_dim +
                  2 * c.head_dim + m.hidden * c.num_heads;
}

void add_moe(const ModelConfig& m, LayerParams& layer) {
  const MoeConfig& moe = m.moe;
  layer.router = moe.num_experts * m.hidden;  // gate weight (E x h)
  if (moe.router_bias) layer.router += moe.num_experts;
  if (moe.router_correction_bias) layer.buffers += moe.num_experts;  // e_score_correction_bias
  int64_t expert = mlp_params(m, moe.expert_ffn, moe.expert_bias);
  layer.routed_experts = moe.num_experts * expert;
  layer.active_routed_experts = moe.top_k * expert;
  // DeepSeek builds its shared experts as ONE MLP of width n_shared * moe_intermediate_size.
  if (moe.shared_experts > 0) {
    layer.mlp = mlp_params(m, moe.shared_experts * moe.shared_expert_ffn, m.mlp_bias);
    if (moe.shared_expert_gate) layer.router += m.hidden;  // shared_expert_gate Linear(h, 1)
  }
}

LayerParams layer_params(const ModelConfig& m, size_t index, bool moe) {
  LayerParams layer;
  switch (m.mixer(index)) {
    case LayerMixer::kAttention:
      add_attention(m, layer);
      add_indexer(m, layer);
      if (m.parallel_mamba) add_mamba2(m, layer);  // Falcon-H1's mixer beside attention
      break;
    case LayerMixer::kCrossAttention:
      // MllamaTextCrossAttention: q/k/v/o, q_norm and k_norm of one head, and the layer's
      // cross_attn_attn_gate and cross_attn_mlp_gate (one scalar each).
      add_attention(m, layer);
      if (!m.qk_norm) layer.attention_replicated += 2 * norm_params(m, m.head_dim);
      layer.attention_replicated += 2;
      break;
    case LayerMixer::kMamba2:
      add_mamba2(m, layer);
      break;
    case LayerMixer::kGatedDeltaNet:
      add_deltanet(m, layer);
      break;
    case LayerMixer::kNone:
      break;
  }
  layer.norms = m.norms_per_layer * norm_params(m, m.hidden);
  if (!m.has_mlp(index)) return layer;
  if (moe) {
    add_moe(m, layer);
  } else {
    layer.mlp = mlp_params(m, m.ffn, m.mlp_bias) + m.mlp_activation_params;
  }
  return layer;
}

bool is_moe_layer(const ModelConfig& m, size_t index) {
  return m.is_moe() && index < m.moe_layers.size() && m.moe_layers[index];
}

// One DeepSeek-V3 MTP module besides its transformer block: enorm and hnorm (h each), eh_proj
// (2h -> h, no bias) and the shared_head norm (h). Embedding and head are the main model's.
int64_t mtp_extra_params(const ModelConfig& m) {
  return 3 * norm_params(m, m.hidden) + 2 * m.hidden * m.hidden;
}

void add_mtp(const ModelConfig& m, ParamCounts& counts) {
  if (m.mtp_layers <= 0) return;
  counts.mtp_layer = layer_params(m, static_cast<size_t>(m.num_layers), m.is_moe());
  counts.mtp_extra = mtp_extra_params(m);
  counts.mtp_total = m.mtp_layers * (counts.mtp_layer.total() + counts.mtp_extra);
}

void fill_breakdown(ParamCounts& counts) {
  LayerParams sum;
  for (const LayerParams& layer : counts.layers) {
    sum.attention += layer.attention + layer.attention_replicated;
    sum.norms += layer.norms;
    sum.ssm += layer.ssm + layer.ssm_small;
    sum.indexer += layer.indexer;
    sum.mlp += layer.mlp;
    sum.router += layer.router + layer.buffers;  // listed with the router it biases
    sum.routed_experts += layer.routed_experts;
  }
  const ParamComponent all[] = {
      {"embedding", counts.embedding},
      {"position embedding", counts.position_embedding},
      {"attention", sum.attention},
      {"mamba / linear-attention mixers", sum.ssm},
      {"sparse-attention indexer", sum.indexer},
      {"norms", sum.norms},
      {"mlp", sum.mlp},
      {"router", sum.router},
      {"routed experts", sum.routed_experts},
      {"lm head", counts.lm_head},
      {"final norm", counts.final_norm},
      {"vision tower + projector", counts.vision},
  };
  // Components a model does not have (a dense model's router) are left out of the list.
  for (const ParamComponent& component : all) {
    if (component.count != 0) counts.breakdown.push_back(component);
  }
}

}  // namespace

ParamCounts count_parameters(const ModelConfig& model) {
  ParamCounts counts;
  counts.embedding = (model.vocab + model.extra_embedding_rows) * model.hidden;
  if (model.learned_position_embeddings) {
    counts.position_embedding = model.max_position_embeddings * model.hidden;
  }
  counts.lm_head = model.tied_embeddings ? 0 : model.vocab * model.hidden;
  counts.final_norm = model.final_norm ? norm_params(model, model.hidden) : 0;
  counts.vision = model.vision_params;
  counts.total = counts.embedding + counts.position_embedding + counts.lm_head + counts.final_norm +
                 counts.vision;
  counts.active = counts.total;
  for (int64_t i = 0; i < model.num_layers; ++i) {
    const size_t index = static_cast<size_t>(i);
    LayerParams layer = layer_params(model, index, is_moe_layer(model, index));
    counts.total += layer.total();
    counts.buffers += layer.buffers;
    counts.active += layer.total() - layer.routed_experts + layer.active_routed_experts;
    counts.layers.push_back(layer);
  }
  add_mtp(model, counts);
  fill_breakdown(counts);
  return counts;
}

}  // namespace vramplan
