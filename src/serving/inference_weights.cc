#include "serving/inference_weights.h"

#include <fmt/format.h>

#include <algorithm>

namespace vramplan {
namespace {

// Linear layers of one kind, before tensor parallelism: column-parallel ones shard their output
// (params and rows / t), row-parallel ones their input (params / t, every output row kept),
// replicated ones are whole on every GPU.
struct LinearSplit {
  LinearShape column, row, replicated;
};

void add(LinearShape& to, Wide params, Wide tensors, Wide rows) {
  to.params += static_cast<int64_t>(params);
  to.tensors += static_cast<int64_t>(tensors);
  to.rows += static_cast<int64_t>(rows);
}

LinearShape per_gpu(const LinearSplit& s, int64_t tp) {
  LinearShape out;
  add(out, ceil_div(s.column.params, tp), s.column.tensors, ceil_div(s.column.rows, tp));
  add(out, ceil_div(s.row.params, tp), s.row.tensors, s.row.rows);
  add(out, s.replicated.params, s.replicated.tensors, s.replicated.rows);
  return out;
}

Wide params_of(const LinearSplit& s) {
  return Wide{s.column.params} + s.row.params + s.replicated.params;
}

LinearSplit attention_linears(const ModelConfig& m) {
  LinearSplit a;
  const Wide h = m.hidden;
  if (m.attention == AttentionKind::kMla) {
    const MlaConfig& mla = m.mla;
    const Wide qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    if (mla.q_lora_rank > 0) {
      add(a.replicated, h * mla.q_lora_rank, 1, mla.q_lora_rank);                    // q_a_proj
      add(a.column, Wide{mla.q_lora_rank} * m.num_heads * qk, 1, m.num_heads * qk);  // q_b_proj
    } else {
      add(a.column, h * m.num_heads * qk, 1, m.num_heads * qk);  // q_proj
    }
    const Wide latent = mla.kv_lora_rank + mla.qk_rope_head_dim;
    add(a.replicated, h * latent, 1, latent);  // kv_a_proj_with_mqa
    const Wide kv_b = Wide{m.num_heads} * (mla.qk_nope_head_dim + mla.v_head_dim);
    add(a.column, Wide{mla.kv_lora_rank} * kv_b, 1, kv_b);     // kv_b_proj
    add(a.row, Wide{m.num_heads} * mla.v_head_dim * h, 1, h);  // o_proj
    return a;
  }
  const Wide qkv_rows = Wide{m.num_heads + 2 * m.num_kv_heads} * m.head_dim;
  add(a.column, h * qkv_rows, 3, qkv_rows);              // q_proj, k_proj, v_proj
  add(a.row, Wide{m.num_heads} * m.head_dim * h, 1, h);  // o_proj
  return a;
}

LinearSplit mlp_linears(const ModelConfig& m, Wide ffn) {
  LinearSplit s;
  if (ffn == 0) return s;
  const Wide h = m.hidden;
  if (m.mlp == MlpKind::kGated) {
    add(s.column, 2 * h * ffn, 2, 2 * ffn);  // gate_proj, up_proj
  } else {
    add(s.column, h * ffn, 1, ffn);  // up (c_fc)
  }
  add(s.row, ffn * h, 1, h);  // down_proj
  return s;
}

}  // namespace

std::vector<ServingRank> serving_ranks(int64_t num_layers, int64_t pp) {
  std::vector<int64_t> counts(pp, num_layers / pp);
  for (int64_t i = 0; i < num_layers % pp; ++i) counts[(pp - 2 - i + pp) % pp] += 1;
  std::vector<ServingRank> ranks(pp);
  int64_t next = 0;
  for (int64_t r = 0; r < pp; ++r) {
    for (int64_t i = 0; i < counts[r]; ++i) ranks[r].layers.push_back(next++);
    ranks[r].first = r == 0;
    ranks[r].last = r == pp - 1;
  }
  return ranks;
}

GpuWeights gpu_weights(const InferenceScenario& s, const ParamCounts& counts,
                       const ServingRank& rank) {
  const ModelConfig& m = s.model;
  const int64_t tp = s.tp;
  GpuWeights g;
  auto& attention = g.by_class[static_cast<size_t>(ModuleClass::kAttention)];
  auto& mlp = g.by_class[static_cast<size_t>(ModuleClass::kMlp)];
  auto& experts = g.by_class[static_cast<size_t>(ModuleClass::kExperts)];
  const LinearSplit attn = attention_linears(m);
  const Wide expert_split = std::max(s.tp, s.ep);
  for (int64_t id : rank.layers) {
    const LayerParams& p = counts.layers[id];
    const bool moe = p.routed_experts > 0;
    const LayerMixer mixer = m.mixer(static_cast<size_t>(id));
    if (mixer == LayerMixer::kAttention || mixer == LayerMixer::kCrossAttention) {
      const LinearShape a = per_gpu(attn, tp);
      add(attention, a.params, a.tensors, a.rows);
      // Whatever is not a linear weight (biases, norms, sinks) stays in the base dtype.
      const Wide attn_column_row = Wide{attn.column.params} + attn.row.params;
      g.other += ceil_div(p.attention - attn_column_row, tp) +
                 (p.attention_replicated - attn.replicated.params) + p.indexer;
    }
    if (p.ssm > 0) {  // Falcon-H1's attention layers hold a Mamba-2 mixer too
      // Mamba-2 / DeltaNet: in_proj column-parallel, out_proj row-parallel (vLLM
      // MambaMixer2 / Qwen3NextGatedDeltaNet), conv and per-head vectors sharded with the heads.
      const Wide out_rows = m.hidden;
      const Wide out_params = mixer != LayerMixer::kGatedDeltaNet
                                  ? Wide{m.mamba.d_inner()} * m.hidden
                                  : Wide{m.deltanet.value_dim()} * m.hidden;
      const Wide in_params = p.ssm - out_params;
      add(attention, ceil_div(in_params, tp), 2, ceil_div(in_params / m.hidden, tp));
      add(attention, ceil_div(out_params, tp), 1, out_rows);
      g.other += ceil_div(p.ssm_small, tp);
    }
    const Wide ffn = !m.has_mlp(static_cast<size_t>(id)) ? 0
                     : moe ? Wide{m.moe.shared_experts} * m.moe.shared_expert_ffn
                           : m.ffn;
    const LinearSplit dense = mlp_linears(m, ffn);
    const LinearShape d = per_gpu(dense, tp);
    add(mlp, d.params, d.tensors, d.rows);
    g.other += ceil_div(p.mlp - params_of(dense), tp) + p.norms + p.router;
    if (moe) {
      const LinearSplit one = mlp_linears(m, m.moe.expert_ffn);
      const Wide per_expert = params_of(one);
      const Wide all = per_expert * m.moe.num_experts;
      const Wide local_experts = s.ep > 1 ? m.moe.num_experts / s.ep : m.moe.num_experts;
      const Wide expert_tp = expert_split / (s.ep > 1 ? s.ep : 1);
      const Wide rows_each = ceil_div(one.column.rows, expert_tp) + one.row.rows;
      add(experts, ceil_div(all, expert_split), local_experts * (one.column.tensors + 1),
          local_experts * rows_each);
      g.other += ceil_div(p.routed_experts - all, expert_split);  // expert biases
    }
  }
  const Wide padded_vocab = ceil_div(m.vocab, 64) * 64;  // vLLM pads the vocabulary to 64
  const Wide vocab_shard = ceil_div(padded_vocab, tp);
  if (rank.first) {
    add(g.by_class[static_cast<size_t>(ModuleClass::kEmbedding)], vocab_shard * m.hidden, 1,
        vocab_shard);
    g.other += counts.position_embedding;
    g.vision = ceil_div(counts.vision, tp);
  }
  if (rank.last) {
    // A tied head shares the embedding's tensor only when both live on the same rank.
    if (!m.tied_embeddings || !rank.first)
      add(g.by_class[static_cast<size_t>(ModuleClass::kLmHead)], vocab_shard * m.hidden, 1,
          vocab_shard);
    g.other += counts.final_norm;
  }
  if (!m.learned_position_embeddings && !rank.layers.empty()) {
    // vLLM's RotaryEmbedding keeps cos|sin for every position: max_positions × rotary_dim.
    const int64_t rotary_dim =
        m.attention == AttentionKind::kMla ? m.mla.qk_rope_head_dim : m.head_dim;
    g.rotary = Wide{m.max_position_embeddings} * rotary_dim;
  }
  return g;
}

int64_t kv_heads_per_gpu(const ModelConfig& m, int64_t tp) {
  return std::max<int64_t>(1, m.num_kv_heads / tp);
}

namespace {

int64_t kv_bits(KvDtype d) {
  switch (d) {
    case KvDtype::kFp32:
      return 32;
    case KvDtype::kBf16:
    case KvDtype::kFp16:
      return 16;
    case KvDtype::kFp8:
    case KvDtype::kInt8:
      return 8;
    case KvDtype::kInt4:
      return 4;
  }
  return 16;
}

// int8/int4 KV caches keep an fp16 scale and zero per token and head, for K and for V (LMDeploy's
// online KV quantisation); fp8 caches use per-tensor scales (negligible).
bool has_token_scales(KvDtype d) { return d == KvDtype::kInt8 || d == KvDtype::kInt4; }

}  // namespace

Wide kv_bytes_per_layer_token(const InferenceScenario& s) {
  const ModelConfig& m = s.model;
  const Wide bits = kv_bits(s.kv_dtype);
  const Wide scales = has_token_scales(s.kv_dtype) ? 4 : 0;  // fp16 scale + fp16 zero
  if (m.attention == AttentionKind::kMla) {
    // One compressed latent and one rope key per token, shared by all heads: every TP rank
    // keeps all of it.
    const Wide width = m.mla.kv_lora_rank + m.mla.qk_rope_head_dim;
    // DeepSeek-V3.2's indexer caches one fp8 key of index_head_dim plus an fp32 scale per token
    // (vLLM deepseek_v2.py DeepseekV32IndexerCache).
    const Wide indexer = m.indexer.num_heads > 0 ? Wide{m.indexer.head_dim} + 4 : 0;
    return ceil_div(width * bits, 8) + scales + indexer;
  }
  const Wide heads = kv_heads_per_gpu(m, s.tp);
  return 2 * heads * (ceil_div(Wide{m.head_dim} * bits, 8) + scales);
}

namespace {

// vLLM MambaSpec (model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator): per
// layer and sequence, Mamba-2 keeps conv (K − 1) × conv_dim/t and ssm H/t × P × N; the gated
// DeltaNet keeps conv (K − 1) × (2k + v)/t and a recurrent Hv/t × dk × dv. Both in the model
// dtype (mamba_cache_dtype "auto").
void add_recurrent_state(const InferenceScenario& s, int64_t mamba, int64_t deltanet, KvLayout& kv,
                         bool explain) {
  const ModelConfig& m = s.model;
  const Wide bytes = bits_of(s.weights.base) / 8;
  const Wide tp = s.tp;
  Wide per_mamba = 0, per_delta = 0;
  if (mamba > 0) {
    const Mamba2Config& c = m.mamba;
    per_mamba = (Wide{c.conv_kernel - 1} * ceil_div(c.conv_dim(), tp) +
                 ceil_div(c.num_heads, tp) * c.head_dim * c.state_size) *
                bytes;
  }
  if (deltanet > 0) {
    const GatedDeltaNetConfig& c = m.deltanet;
    per_delta = (Wide{c.conv_kernel - 1} * ceil_div(c.conv_dim(), tp) +
                 ceil_div(c.num_v_heads, tp) * c.k_head_dim * c.v_head_dim) *
                bytes;
  }
  if (mamba == 0 && deltanet == 0) return;  // attention only: no state (state_per_sequence 0)
  kv.state_per_sequence = mamba * per_mamba + deltanet * per_delta;
  if (!explain || kv.state_per_sequence == 0) return;
  if (mamba > 0) {
    const Mamba2Config& c = m.mamba;
    kv.state_formula =
        fmt::format("{} {} layers × (conv {} × {}/{} + ssm {}/{} heads × {} × {}) × {} B", mamba,
                    c.dt_rank > 0 ? "Mamba-1" : "Mamba-2", c.conv_kernel - 1, c.conv_dim(), s.tp,
                    c.num_heads, s.tp, c.head_dim, c.state_size, static_cast<int64_t>(bytes));
  }
  if (deltanet > 0) {
    const GatedDeltaNetConfig& c = m.deltanet;
    kv.state_formula += fmt::format(
        "{}{} gated-DeltaNet layers × (conv {} × {}/{} + recurrent {}/{} heads × {} × {}) × {} B",
        kv.state_formula.empty() ? "" : " + ", deltanet, c.conv_kernel - 1, c.conv_dim(), s.tp,
        c.num_v_heads, s.tp, c.k_head_dim, c.v_head_dim, static_cast<int64_t>(bytes));
  }
}

}  // namespace

KvLayout kv_layout(const InferenceScenario& s, const ServingRank& rank, int64_t context,
                   bool explain) {
  const ModelConfig& m = s.model;
  const Wide per_layer = kv_bytes_per_layer_token(s);
  int64_t full = 0, sliding = 0, mamba = 0, deltanet = 0;
  for (int64_t id : rank.layers) {
    const LayerMixer mixer = m.mixer(static_cast<size_t>(id));
    if (mixer == LayerMixer::kMamba2) ++mamba;
    if (mixer == LayerMixer::kGatedDeltaNet) ++deltanet;
    if (mixer != LayerMixer::kAttention) continue;
    mamba += m.parallel_mamba ? 1 : 0;  // Falcon-H1: a Mamba-2 state beside the KV
    (m.layer_attention[id] == LayerAttention::kSliding ? sliding : full) += 1;
  }
  const Wide block = s.block_size;
  const Wide full_tokens = ceil_div(context, block) * block;
  const Wide window_tokens = ceil_div(std::min<int64_t>(context, m.sliding_window), block) * block;
  KvLayout kv;
  kv.per_token = per_layer * (full + sliding);
  kv.per_sequence = per_layer * (full * full_tokens + sliding * window_tokens);
  add_recurrent_state(s, mamba, deltanet, kv, explain);
  if (!explain) return kv;
  const int64_t layers = full + sliding;
  const std::string bytes = kv_dtype_name(s.kv_dtype);
  const double elem = static_cast<double>(kv_bits(s.kv_dtype)) / 8;
  if (m.attention == AttentionKind::kMla) {
    kv.token_formula =
        fmt::format("({} latent + {} rope) · {} layers · {} B ({}){}, the same on every TP rank",
                    m.mla.kv_lora_rank, m.mla.qk_rope_head_dim, layers, elem, bytes,
                    has_token_scales(s.kv_dtype) ? " + 4 B scale/zero per layer" : "");
  } else {
    const int64_t heads = kv_heads_per_gpu(m, s.tp);
    const std::string head_text =
        s.tp == 1 ? fmt::format("{}", m.num_kv_heads)
        : m.num_kv_heads >= s.tp
            ? fmt::format("{}/{}", m.num_kv_heads, s.tp)
            : fmt::format("1 (of {}, replicated over tp {})", m.num_kv_heads, s.tp);
    kv.token_formula = fmt::format(
        "2 (K, V) · {} layers · {} KV heads · {} dim · {} B ({}){}", layers, head_text, m.head_dim,
        elem, bytes,
        has_token_scales(s.kv_dtype) ? fmt::format(" + 2 · {} heads · 4 B scale/zero", heads) : "");
  }
  if (sliding == 0) {
    kv.sequence_formula =
        fmt::format("{} tokens (blocks of {}) × {} layers × {} B", group_digits(full_tokens),
                    s.block_size, full, group_digits(per_layer));
  } else {
    kv.sequence_formula = fmt::format(
        "({} full layers × {} tokens + {} sliding layers × {} tokens (window {})) × {} B, tokens "
        "in blocks of {}",
        full, group_digits(full_tokens), sliding, group_digits(window_tokens), m.sliding_window,
        group_digits(per_layer), s.block_size);
  }
  return kv;
}

}  // namespace vramplan
