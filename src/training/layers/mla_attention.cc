// Activations of multi-head latent attention (DeepSeek-V2/V3; layer_terms.h).
#include <fmt/format.h>

#include "training/activations.h"
#include "training/layers/layer_terms.h"

namespace vramplan {
namespace {

// transformers' DeepseekV2/V3 attention splits kv_b_proj's output into the no-rope K part and V
// with torch.split: V is a view, so the attention kernel that saves V keeps the whole output
// (modeling_deepseek_v2.py; seen on the reference's live tensors).
void add_mla_value(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const MlaConfig& mla = s.model.mla;
  const Wide a = s.model.num_heads;
  if (s.conventions.model_code != ModelCode::kTransformers) {
    sum.add("V", "n·a·v·B/t", d.n * a * mla.v_head_dim * d.bytes / d.t);
    return;
  }
  sum.add("kv_b output (V and the K part it is split from)", "n·a·(nope+v)·B/t",
          d.n * a * (mla.qk_nope_head_dim + mla.v_head_dim) * d.bytes / d.t);
}

}  // namespace

void add_mla_attention(const Scenario& s, const Dims& d, bool frozen, SumBuilder& sum) {
  const MlaConfig& mla = s.model.mla;
  const Wide a = s.model.num_heads;
  const Wide qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  // Under LoRA's frozen base (lora_frozen_layer) a projection keeps its input only through an
  // adapter in the activation dtype, and a latent norm keeps no normalised value for its frozen
  // weight; its upcast stays, since the up-projection's output needs a gradient.
  // q_b_proj reads the q latent, kv_b_proj the kv latent; q_proj (no q_lora_rank), q_a_proj and
  // kv_a_proj_with_mqa read the layer's normed input.
  const bool q_input = !frozen || adapter_keeps_input(s, kLoraQB);
  const bool kv_input = !frozen || adapter_keeps_input(s, kLoraKVB);
  const uint32_t q_reads_input = mla.q_lora_rank > 0 ? kLoraQA : kLoraQ;
  if (!frozen || adapter_keeps_input(s, q_reads_input | kLoraKVA))
    add_linear_input(d, "down-projection input", sum);
  // The low-rank latents are not split by TP: every TP rank computes them. Each latent norm
  // keeps what norm_keeps says, its output is the up-projection's saved input.
  NormKeeps keeps = norm_keeps(s);
  if (frozen) keeps.per_value -= norm_weight_part(s);
  const std::string per_value =
      frozen ? std::to_string(static_cast<int64_t>(keeps.per_value)) : std::string(keeps.expr);
  if (mla.q_lora_rank > 0) {
    const std::string expr =
        fmt::format("n·(q_lora·({}{})+{})", per_value, q_input ? "+B" : "", keeps.per_token);
    sum.add(
        "q latent + its norm", expr.c_str(),
        d.n * (mla.q_lora_rank * (keeps.per_value + (q_input ? d.bytes : 0)) + keeps.per_token));
  }
  const std::string kv_expr =
      fmt::format("n·(kv_lora·({}{})+rope·B+{})", per_value, kv_input ? "+B" : "", keeps.per_token);
  sum.add("kv latent + its norm", kv_expr.c_str(),
          d.n * (mla.kv_lora_rank * (keeps.per_value + (kv_input ? d.bytes : 0)) +
                 mla.qk_rope_head_dim * d.bytes + keeps.per_token));
  sum.add("Q,K", "2·n·a·(nope+rope)·B/t", 2 * d.n * a * qk * d.bytes / d.t);
  add_mla_value(s, d, sum);
  add_attention_output(d, a * mla.v_head_dim, "n·a·v", sum);
}

}  // namespace vramplan
