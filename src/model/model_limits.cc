// The sizes a model may have: every count positive where it must be, and bounded so that no
// later product overflows (the planner multiplies them millions of times).
#include "model/model_limits.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "vramplan/model/hf_config.h"

namespace vramplan {
namespace {

// Bounds that keep every memory product far from 2^63 (see check_total_size).
constexpr int64_t kMaxHidden = 1 << 20;
constexpr int64_t kMaxLayers = 100'000;
constexpr int64_t kMaxHeads = 1 << 16;
constexpr int64_t kMaxHeadDim = 1 << 16;
constexpr int64_t kMaxFfn = 1 << 24;
constexpr int64_t kMaxVocab = 100'000'000;
constexpr int64_t kMaxPositions = int64_t{1} << 30;
constexpr int64_t kMaxExperts = 1'000'000;
constexpr int64_t kMaxNorms = 16;
constexpr int64_t kMaxMtp = 1'000;
// At most 2^50 (~1.1e15) parameters: with ~20 bytes of training state per parameter and the
// further products downstream (bytes, shards, bucket sizes) everything stays below 2^60.
constexpr long double kMaxParams = 0x1p50L;

std::optional<Error> check_range(const std::string& field, int64_t value, int64_t min,
                                 int64_t max) {
  if (value >= min && value <= max) return std::nullopt;
  std::string accepted = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  std::string reason = value < min ? (min == 1 ? "must be positive" : "must not be negative")
                                   : "too large: memory byte counts would overflow 64 bits";
  return Error{field, std::to_string(value), accepted, reason};
}

std::optional<Error> first_error(std::initializer_list<std::optional<Error>> checks) {
  for (const std::optional<Error>& check : checks) {
    if (check) return check;
  }
  return std::nullopt;
}

bool any_dense_layer(const ModelConfig& m) {
  return std::find(m.moe_layers.begin(), m.moe_layers.end(), false) != m.moe_layers.end();
}

std::optional<Error> check_sizes(const ModelConfig& m) {
  // A model whose every layer is MoE needs no dense width.
  int64_t min_ffn = m.is_moe() && !any_dense_layer(m) ? 0 : 1;
  return first_error({
      check_range("hidden", m.hidden, 1, kMaxHidden),
      check_range("num_layers", m.num_layers, 1, kMaxLayers),
      check_range("num_heads", m.num_heads, 1, kMaxHeads),
      check_range("num_kv_heads", m.num_kv_heads, 1, m.num_heads),
      check_range("head_dim", m.head_dim, 1, kMaxHeadDim),
      check_range("ffn", m.ffn, min_ffn, kMaxFfn),
      check_range("vocab", m.vocab, 1, kMaxVocab),
      check_range("max_position_embeddings", m.max_position_embeddings,
                  m.learned_position_embeddings ? 1 : 0, kMaxPositions),
      check_range("norms_per_layer", m.norms_per_layer, 0, kMaxNorms),
      check_range("mtp_layers", m.mtp_layers, 0, kMaxMtp),
  });
}

std::optional<Error> check_heads(const ModelConfig& m) {
  if (m.num_heads % m.num_kv_heads == 0) return std::nullopt;
  return Error{"num_kv_heads", std::to_string(m.num_kv_heads),
               "a divisor of num_heads (" + std::to_string(m.num_heads) + ")",
               std::to_string(m.num_heads) + " attention heads cannot be grouped evenly"};
}

std::optional<Error> check_moe(const ModelConfig& m) {
  const MoeConfig& moe = m.moe;
  if (auto error = check_range("moe.num_experts", moe.num_experts, 0, kMaxExperts)) return error;
  if (!m.is_moe()) return std::nullopt;
  if (moe.top_k > moe.num_experts) {
    return Error{"moe.top_k", std::to_string(moe.top_k), "1 to " + std::to_string(moe.num_experts),
                 "more experts per token than the " + std::to_string(moe.num_experts) + " experts"};
  }
  return first_error({
      check_range("moe.top_k", moe.top_k, 1, moe.num_experts),
      check_range("moe.expert_ffn", moe.expert_ffn, 1, kMaxFfn),
      check_range("moe.shared_experts", moe.shared_experts, 0, kMaxExperts),
      check_range("moe.shared_expert_ffn", moe.shared_expert_ffn, moe.shared_experts > 0 ? 1 : 0,
                  kMaxFfn),
  });
}

std::optional<Error> check_mla(const ModelConfig& m) {
  if (m.attention != AttentionKind::kMla) return std::nullopt;
  const MlaConfig& mla = m.mla;
  auto error = first_error({
      check_range("mla.q_lora_rank", mla.q_lora_rank, 0, kMaxHidden),
      check_range("mla.kv_lora_rank", mla.kv_lora_rank, 1, kMaxHidden),
      check_range("mla.qk_nope_head_dim", mla.qk_nope_head_dim, 0, kMaxHeadDim),
      check_range("mla.qk_rope_head_dim", mla.qk_rope_head_dim, 0, kMaxHeadDim),
      check_range("mla.v_head_dim", mla.v_head_dim, 1, kMaxHeadDim),
  });
  if (error || mla.qk_nope_head_dim + mla.qk_rope_head_dim > 0) return error;
  return Error{"mla.qk_nope_head_dim", "0", "a positive qk_nope_head_dim + qk_rope_head_dim",
               "queries and keys would have no width"};
}

std::optional<Error> check_layers(const ModelConfig& m) {
  auto count = static_cast<size_t>(m.num_layers);
  std::string accepted = "one entry per layer (" + std::to_string(m.num_layers) + ")";
  if (m.moe_layers.size() != count) {
    return Error{"moe_layers", std::to_string(m.moe_layers.size()) + " entries", accepted, ""};
  }
  if (m.layer_attention.size() != count) {
    return Error{"layer_attention", std::to_string(m.layer_attention.size()) + " entries", accepted,
                 ""};
  }
  if (!m.is_moe() &&
      std::find(m.moe_layers.begin(), m.moe_layers.end(), true) != m.moe_layers.end()) {
    return Error{"moe_layers", "MoE layers", "no MoE layers when moe.num_experts is 0", ""};
  }
  bool sliding = std::find(m.layer_attention.begin(), m.layer_attention.end(),
                           LayerAttention::kSliding) != m.layer_attention.end();
  return check_range("sliding_window", m.sliding_window, sliding ? 1 : 0, kMaxPositions);
}

// A generous upper estimate of the parameter count in long double, computed before anything
// multiplies sizes in int64, so that absurd combinations are refused instead of overflowing.
long double approx_params(const ModelConfig& m) {
  long double h = m.hidden, d = m.head_dim, a = m.num_heads, g = m.num_kv_heads;
  long double ranks = m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim;
  long double widths = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim;
  long double attention =
      2 * h * (a + g) * d + (h + a * widths) * (ranks + 1) + a * widths * h + 4 * (h + a * d);
  long double mlp = 3 * (h + 1) * (m.ffn + 1);
  long double experts = (m.moe.num_experts + m.moe.shared_experts) * 3 * (h + 1) *
                        (m.moe.expert_ffn + m.moe.shared_expert_ffn + 1);
  long double layer = attention + mlp + experts + m.moe.num_experts * (h + 2) + 40 * h;
  long double layers = static_cast<long double>(m.num_layers) + m.mtp_layers;
  return layers * (layer + 2 * h * h) + (2.0L * m.vocab + m.max_position_embeddings + 4) * h;
}

std::optional<Error> check_total_size(const ModelConfig& m) {
  long double params = approx_params(m);
  if (params <= kMaxParams) return std::nullopt;
  char estimate[32];
  std::snprintf(estimate, sizeof estimate, "about %.3g parameters", static_cast<double>(params));
  return Error{"model", estimate, "at most about 1.1e15 (2^50) parameters",
               "the sizes together are too large: memory byte counts would overflow 64 bits"};
}

}  // namespace

// Everything but the per-layer vectors. MLA first: its widths make up head_dim.
std::optional<Error> validate_sizes(const ModelConfig& model) {
  if (auto error = check_mla(model)) return error;
  if (auto error = check_sizes(model)) return error;
  if (auto error = check_heads(model)) return error;
  if (auto error = check_moe(model)) return error;
  return check_total_size(model);
}

std::optional<Error> validate_model(const ModelConfig& model) {
  if (auto error = validate_sizes(model)) return error;
  return check_layers(model);
}

}  // namespace vramplan
