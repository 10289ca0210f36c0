#include "model/megatron_config.h"

#include <cctype>
#include <regex>
#include <string>

namespace vramplan::hf {

void read_megatron_sizes(Fields& f, ModelConfig& m) {
  m.hidden = f.required({"hidden_size"});
  m.num_layers = f.required({"num_layers"});
  m.num_heads = f.required({"num_attention_heads"});
  // --num-query-groups counts only with --group-query-attention.
  m.num_kv_heads = f.boolean("group_query_attention", false)
                       ? f.integer_or("num_query_groups", m.num_heads)
                       : m.num_heads;
  m.head_dim = f.integer_or("kv_channels", m.num_heads > 0 ? m.hidden / m.num_heads : 0);
  const bool swiglu = f.boolean("swiglu", false);
  m.mlp = swiglu ? MlpKind::kGated : MlpKind::kPlain;
  // arguments.py: 4h, or int(4h·2/3 / 64)·64 with SwiGLU.
  const int64_t h = m.hidden <= INT64_MAX / 8 ? m.hidden : 0;
  m.ffn = f.integer_or("ffn_hidden_size", swiglu ? (4 * h * 2 / 3) / 64 * 64 : 4 * h);
  m.vocab = f.required({"vocab_size"});
  const int64_t seq = f.integer_or("seq_length", 0, 0);
  m.max_position_embeddings = f.integer_or("max_position_embeddings", seq, 0);
  const std::optional<std::string> norm = f.string("normalization");
  if (norm && *norm != "LayerNorm" && *norm != "RMSNorm")
    f.fail({f.field("normalization"), *norm, "LayerNorm or RMSNorm", ""});
  m.norm = norm && *norm == "RMSNorm" ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  const bool bias = !f.boolean("disable_bias_linear", false);
  m.qkv_bias = bias || f.boolean("add_qkv_bias", false);
  m.attn_out_bias = m.mlp_bias = bias;
  m.tied_embeddings = !f.boolean("untie_embeddings_and_output_weights", false);
  const std::optional<std::string> position = f.string("position_embedding_type");
  m.learned_position_embeddings = !position || *position == "learned_absolute";
  m.qk_norm = f.boolean("qk_layernorm", false);
  m.mtp_layers = f.integer_or("mtp_num_layers", 0, 0);
  if (f.boolean("multi_latent_attention", false)) {
    // arguments.py defaults: q projected directly, kv_lora_rank 32, qk 128 + rope 64, v 128.
    m.attention = AttentionKind::kMla;
    m.mla = MlaConfig{f.integer_or("q_lora_rank", 0, 0), f.integer_or("kv_lora_rank", 32),
                      f.integer_or("qk_head_dim", 128, 0),
                      f.integer_or("qk_pos_emb_head_dim", 64, 0), f.integer_or("v_head_dim", 128)};
    m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    m.num_kv_heads = m.num_heads;
  }
  const int64_t experts = f.integer_or("num_experts", 0, 0);
  if (experts > 0) {
    m.moe.num_experts = experts;
    m.moe.top_k = f.integer_or("moe_router_topk", 2);
    m.moe.expert_ffn = f.integer_or("moe_ffn_hidden_size", m.ffn);
    // One shared expert of that (total) width.
    const int64_t shared = f.integer_or("moe_shared_expert_intermediate_size", 0, 0);
    m.moe.shared_experts = shared > 0 ? 1 : 0;
    m.moe.shared_expert_ffn = shared;
    m.moe.router_correction_bias = f.boolean("moe_router_enable_expert_bias", false);
    const int64_t groups = f.integer_or("moe_router_num_groups", 0, 0);
    const int64_t picked = f.integer_or("moe_router_group_topk", 0, 0);
    if (groups > 1 && picked > 0 && picked < groups && experts % groups == 0) {
      m.moe.router_groups = groups;
      m.moe.router_group_top_k = picked;
    }
  }
}

void read_megatron_layers(Fields& f, ModelConfig& m) {
  m.layer_attention.assign(m.num_layers, LayerAttention::kFull);
  m.moe_layers.assign(m.num_layers, false);
  if (!m.is_moe()) return;
  const json* freq = f.get("moe_layer_freq");
  std::string text = "1";
  if (freq != nullptr && freq->is_array()) {
    text.clear();
    for (const json& v : *freq) text += v.dump() + ",";
  } else if (freq != nullptr) {
    text = freq->is_string() ? freq->get<std::string>() : freq->dump();
  }
  Result<std::vector<bool>> pattern =
      moe_layer_pattern(text, m.num_layers, f.field("moe_layer_freq"));
  if (!pattern) {
    f.fail(pattern.error());
    return;
  }
  m.moe_layers = std::move(pattern).value();
}

Result<std::vector<bool>> moe_layer_pattern(std::string_view text, int64_t layers,
                                            const std::string& field) {
  const std::string s(text);
  const std::string accepted =
      "an integer k (every k-th layer MoE), a pattern such as ([0]*3+[1]*58), or a list of 0/1 "
      "with one entry per layer";
  std::vector<bool> pattern;
  static const std::regex kPiece(R"(\[([01])\]\s*\*\s*(\d{1,6}))");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), kPiece); it != std::sregex_iterator();
       ++it)
    pattern.insert(pattern.end(), std::stoll((*it)[2]), (*it)[1] == "1");
  if (pattern.empty() && s.find_first_of(",[") != std::string::npos) {
    for (char c : s) {
      if (c == '0' || c == '1')
        pattern.push_back(c == '1');
      else if (!std::isspace(static_cast<unsigned char>(c)) && c != ',' && c != '[' && c != ']')
        return Error{field, s, accepted, ""};
    }
  }
  if (!pattern.empty()) {
    if (static_cast<int64_t>(pattern.size()) != layers)
      return Error{field, s, accepted,
                   "it lists " + std::to_string(pattern.size()) + " layers, the model has " +
                       std::to_string(layers)};
    return pattern;
  }
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
    return Error{field, s, accepted, ""};
  const int64_t every = std::stoll(s);
  if (every < 1) return Error{field, s, accepted, ""};
  for (int64_t i = 0; i < layers; ++i) pattern.push_back(i % every == 0);
  return pattern;
}

}  // namespace vramplan::hf
