#include "model/family_readers.h"

#include <algorithm>
#include <set>
#include <string>

namespace vramplan::hf {
namespace {

void read_mla(Fields& f, ModelConfig& m) {
  m.attention = AttentionKind::kMla;
  m.mla.q_lora_rank = f.integer_or("q_lora_rank", 0, 0);  // null: q projected directly
  m.mla.kv_lora_rank = f.required({"kv_lora_rank"});
  m.mla.qk_nope_head_dim = f.required({"qk_nope_head_dim"}, 0);
  m.mla.qk_rope_head_dim = f.required({"qk_rope_head_dim"}, 0);
  m.mla.v_head_dim = f.required({"v_head_dim"});
  // Attention scores use the full query/key width; every head has its own latent-derived k/v.
  // (Absurd widths are reported by validation; the sum must not overflow before that.)
  int64_t nope = m.mla.qk_nope_head_dim, rope = m.mla.qk_rope_head_dim;  // both >= 0 here
  m.head_dim = nope > INT64_MAX - rope ? INT64_MAX : nope + rope;
  m.num_kv_heads = m.num_heads;
  // DeepSeek-V3.2: the lightning indexer of DeepSeek Sparse Attention.
  if (m.model_type == "deepseek_v32") {
    m.indexer.num_heads = f.required({"index_n_heads"});
    m.indexer.head_dim = f.required({"index_head_dim"});
    m.indexer.top_k = f.integer_or("index_topk", 2048);
  }
}

// Layer attention from an explicit layer_types list.
void read_layer_types(Fields& f, const json& types, ModelConfig& m) {
  if (!types.is_array() || static_cast<int64_t>(types.size()) != m.num_layers) {
    f.fail({f.field("layer_types"), show(types),
            "a list of " + std::to_string(m.num_layers) + " layer types (one per layer)", ""});
    return;
  }
  for (const json& type : types) {
    if (type == "sliding_attention") {
      m.layer_attention.push_back(LayerAttention::kSliding);
    } else if (type == "full_attention") {
      m.layer_attention.push_back(LayerAttention::kFull);
    } else {
      f.fail({f.field("layer_types"), show(type), "\"full_attention\" or \"sliding_attention\"",
              "unsupported layer type"});
      return;
    }
  }
}

// Which layers slide when the file has no layer_types: the family's own rule in transformers.
bool slides(Fields& f, Family family, int64_t layer) {
  switch (family) {
    case Family::kMistral:
    case Family::kMixtral:
    case Family::kPhi3:
      return f.has("sliding_window");  // a non-null window applies to every layer
    case Family::kQwen2:
    case Family::kQwen3:
    case Family::kQwen3Moe:
      return f.boolean("use_sliding_window", false) && f.has("sliding_window") &&
             layer >= f.integer_or("max_window_layers", 28, 0);
    case Family::kGemma2:
    case Family::kGptOss:
      return layer % 2 == 0;  // sliding, full, sliding, ...
    case Family::kGemma3: {
      int64_t pattern = f.integer_or("sliding_window_pattern", 6);
      return (layer + 1) % pattern != 0;  // every pattern-th layer is full
    }
    default:
      return false;
  }
}

}  // namespace

void read_standard_sizes(Fields& f, ModelConfig& m) {
  m.hidden = f.required({"hidden_size"});
  m.num_layers = f.required({"num_hidden_layers"});
  m.num_heads = f.required({"num_attention_heads"});
  m.num_kv_heads = f.integer_or("num_key_value_heads", m.num_heads);
  // transformers: getattr(config, "head_dim", None) or hidden_size // num_attention_heads.
  m.head_dim = f.integer_or("head_dim", m.num_heads > 0 ? m.hidden / m.num_heads : 0);
  m.ffn = f.required({"intermediate_size"});
  m.vocab = f.required({"vocab_size"});
  m.max_position_embeddings = f.integer_or("max_position_embeddings", 0, 0);
}

void read_gpt2(Fields& f, ModelConfig& m) {
  m.hidden = f.required({"n_embd", "hidden_size"});
  m.num_layers = f.required({"n_layer", "num_hidden_layers"});
  m.num_heads = f.required({"n_head", "num_attention_heads"});
  m.num_kv_heads = m.num_heads;
  m.head_dim = m.num_heads > 0 ? m.hidden / m.num_heads : 0;
  // GPT2MLP: n_inner or 4 * n_embd (an absurd n_embd is reported by validation, not overflowed).
  m.ffn = f.integer_or("n_inner", m.hidden <= INT64_MAX / 4 ? 4 * m.hidden : 0);
  m.vocab = f.required({"vocab_size"});
  m.max_position_embeddings = f.integer_or("n_positions", 1024);  // GPT2Config default
  m.mlp = MlpKind::kPlain;
  m.norm = NormKind::kLayerNorm;
  m.learned_position_embeddings = true;
  m.qkv_bias = m.attn_out_bias = m.mlp_bias = true;  // Conv1D layers always carry a bias
}

void read_family_features(Fields& f, Family family, ModelConfig& m) {
  if (honors_attention_bias(family)) {
    m.qkv_bias = m.attn_out_bias = f.boolean("attention_bias", false);
  }
  if (family == Family::kLlama || family == Family::kUnknown) {
    m.mlp_bias = f.boolean("mlp_bias", false);
  }
  switch (family) {
    case Family::kQwen2:
      m.qkv_bias = true;  // Qwen2Attention: q/k/v with bias, o without
      break;
    case Family::kQwen3:
    case Family::kQwen3Moe:
      m.qk_norm = true;
      break;
    case Family::kGemma2:
      m.norms_per_layer = 4;  // pre/post attention and pre/post feed-forward
      break;
    case Family::kGemma3:
      m.norms_per_layer = 4;
      m.qk_norm = true;
      break;
    case Family::kOlmo2:
    case Family::kOlmo3:
      m.qk_norm_full_width = true;  // q_norm over a*d, k_norm over g*d
      break;
    case Family::kHunyuan:
      m.qk_norm = true;  // query_layernorm, key_layernorm of one head's width
      break;
    case Family::kSeedOss:
      // SeedOssAttention: q/k/v take attention_bias, o_proj attention_out_bias.
      m.qkv_bias = f.boolean("attention_bias", true);
      m.attn_out_bias = f.boolean("attention_out_bias", false);
      break;
    case Family::kGlm4Moe:
      // Glm4MoeAttention: q/k/v take attention_bias; o_proj never has one.
      m.qkv_bias = f.boolean("attention_bias", false);
      m.qk_norm = f.boolean("use_qk_norm", false);
      break;
    case Family::kMiniMaxM2:
      // MiniMaxM2Attention: no biases; q_norm over a*d and k_norm over g*d ("per_layer").
      m.qk_norm_full_width = f.boolean("use_qk_norm", true);
      break;
    case Family::kErnie45Moe:
      m.qkv_bias = m.attn_out_bias = m.mlp_bias = f.boolean("use_bias", false);
      break;

    case Family::kGptOss:
      m.attention_sinks = true;
      break;
    case Family::kDeepseek:
      read_mla(f, m);
      break;
    default:
      break;
  }
}

// MoE layer placement, per family.
std::vector<bool> moe_layer_flags(Fields& f, Family family, const ModelConfig& m) {
  std::vector<bool> flags(static_cast<size_t>(std::max<int64_t>(m.num_layers, 0)), false);
  if (m.moe.num_experts == 0) return flags;
  int64_t first_dense = 0, every = 1;
  std::set<int64_t> dense_only;
  int64_t last_moe = m.num_layers - 1;
  const bool deepseek_rule =
      family == Family::kDeepseek || family == Family::kGlm4Moe || family == Family::kErnie45Moe;
  if (family == Family::kDeepseek || family == Family::kGlm4Moe) {
    first_dense = f.integer_or("first_k_dense_replace", 0, 0);
    every = f.integer_or("moe_layer_freq", 1);
  } else if (family == Family::kErnie45Moe) {
    // Ernie4_5_MoeDecoderLayer: MoE where i >= moe_layer_start_index, i <= moe_layer_end_index
    // and (i + 1) % moe_layer_interval == 0.
    first_dense = f.integer_or("moe_layer_start_index", 0, 0);
    last_moe = f.integer_or("moe_layer_end_index", m.num_layers - 1, -1);
    if (last_moe < 0) last_moe = m.num_layers - 1;
    every = f.integer_or("moe_layer_interval", 1);
  } else if (family == Family::kQwen3Moe || family == Family::kQwen3Next) {
    every = f.integer_or("decoder_sparse_step", 1);
    if (const json* list = f.get("mlp_only_layers")) {
      if (!list->is_array()) {
        f.fail({f.field("mlp_only_layers"), show(*list), "a list of layer indices", ""});
        return flags;
      }
      for (const json& index : *list) {
        if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
            index.get<int64_t>() >= m.num_layers) {
          f.fail({f.field("mlp_only_layers"), show(*list),
                  "layer indices from 0 to " + std::to_string(m.num_layers - 1), ""});
          return flags;
        }
        dense_only.insert(index.get<int64_t>());
      }
    }
  }
  for (int64_t i = 0; i < m.num_layers; ++i) {
    bool moe = i >= first_dense && i <= last_moe && !dense_only.contains(i);
    // DeepSeek: layer_idx % moe_layer_freq == 0; Qwen MoE: (layer_idx + 1) % decoder_sparse_step.
    moe = moe &&
          (deepseek_rule && family != Family::kErnie45Moe ? i % every == 0 : (i + 1) % every == 0);
    flags[static_cast<size_t>(i)] = moe;
  }
  return flags;
}

namespace {
void read_router_groups(Fields& f, ModelConfig& m) {
  const int64_t groups = f.integer_or("n_group", 0, 0);
  const int64_t picked = f.integer_or("topk_group", 0, 0);
  if (groups > 1 && picked > 0 && picked < groups && m.moe.num_experts % groups == 0) {
    m.moe.router_groups = groups;
    m.moe.router_group_top_k = picked;
  }
}
}  // namespace

void read_moe(Fields& f, Family family, ModelConfig& m) {
  if (family == Family::kHunyuanMoe) return;  // per-layer lists: recent_readers.cc
  for (std::string_view key :
       {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}) {
    if (f.has(key)) {
      m.moe.num_experts = f.integer_or(key, 0, 0);
      break;
    }
  }
  if (m.moe.num_experts > 0) {
    m.moe.top_k = f.required({"num_experts_per_tok", "experts_per_token", "moe_k"});
    // Mixtral and gpt-oss size their experts with intermediate_size.
    m.moe.expert_ffn =
        f.has("moe_intermediate_size") ? f.integer_or("moe_intermediate_size", 0) : m.ffn;
    m.moe.shared_experts = f.integer_or(
        family == Family::kErnie45Moe ? "moe_num_shared_experts" : "n_shared_experts", 0, 0);
    if (m.moe.shared_experts > 0) m.moe.shared_expert_ffn = m.moe.expert_ffn;
    if (family == Family::kGptOss) m.moe.router_bias = m.moe.expert_bias = true;
    // DeepSeek-V3's noaux_tc routing adds e_score_correction_bias; the published totals count it.
    std::string method = f.string("topk_method").value_or("");
    // GLM-4.5, MiniMax-M2 (use_routing_bias) and ERNIE-4.5 (moe_statics) carry the same bias.
    m.moe.router_correction_bias =
        (family == Family::kDeepseek && (m.model_type != "deepseek_v2" || method == "noaux_tc")) ||
        family == Family::kGlm4Moe || family == Family::kErnie45Moe ||
        (family == Family::kMiniMaxM2 && f.boolean("use_routing_bias", true));
    // DeepSeek-V2/V3's group-limited routing (modeling_deepseek.py: n_group groups, topk_group
    // of them per token); "greedy" routing (V2-Lite) ignores the groups.
    if (family == Family::kDeepseek && method != "greedy") read_router_groups(f, m);
  }
}

void read_attention_layout(Fields& f, Family family, ModelConfig& m) {
  m.layer_attention.clear();
  if (const json* types = f.get("layer_types")) {
    read_layer_types(f, *types, m);
  } else {
    for (int64_t i = 0; i < m.num_layers && !f.error(); ++i) {
      m.layer_attention.push_back(slides(f, family, i) ? LayerAttention::kSliding
                                                       : LayerAttention::kFull);
    }
  }
  bool any_sliding = std::find(m.layer_attention.begin(), m.layer_attention.end(),
                               LayerAttention::kSliding) != m.layer_attention.end();
  if (!any_sliding) return;
  // gpt-oss defaults its window to 128 when the key is absent.
  int64_t fallback = family == Family::kGptOss ? 128 : 0;
  m.sliding_window = f.integer_or("sliding_window", fallback);
  if (m.sliding_window == 0 && !f.error()) {
    f.fail({f.field("sliding_window"), "missing", "a positive integer",
            "layers are sliding-window but no window is given"});
  }
}

}  // namespace vramplan::hf
