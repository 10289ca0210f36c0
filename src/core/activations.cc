#include "core/activations.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "vramplan/precision.h"

namespace vramplan {
namespace {

// Accumulates named parts of a sum; renders "label expr (bytes) + ..." when explaining.
class SumBuilder {
 public:
  explicit SumBuilder(bool explain) : explain_(explain) {}
  void add(const char* label, const char* expression, Wide bytes) {
    total_ += bytes;
    if (!explain_ || bytes == 0) return;
    if (!text_.empty()) text_ += " + ";
    text_ += fmt::format("{} {} ({})", label, expression, short_bytes(bytes));
  }
  Term finish(const std::string& preamble) const {
    Term term{total_, ""};
    if (explain_) term.formula = preamble + text_ + " = " + short_bytes(total_);
    return term;
  }

 private:
  bool explain_;
  Wide total_ = 0;
  std::string text_;
};

struct Dims {
  Wide n;  // tokens of a microbatch on this CP rank
  Wide h;
  Wide t;               // tensor-parallel degree
  Wide t_sp;            // divisor of hidden-wide tensors outside the TP region: t with SP, else 1
  Wide t_in;            // divisor of a column-parallel linear's saved input: t_sp, or 1 when the
                        // framework saves the all-gathered input (Conventions)
  Wide bytes;           // activation dtype bytes
  const char* in_expr;  // "n·h·B/t_sp" or "n·h·B (all-gathered)"
};

Dims dims_of(const Scenario& s) {
  const Parallelism& par = s.parallel;
  const Wide t = par.tp;
  const Wide t_sp = (par.sequence_parallel && par.tp > 1) ? t : Wide{1};
  const bool gathered = t_sp > 1 && s.conventions.sp_saves_gathered_inputs;
  return Dims{tokens_per_rank(s),
              s.model.hidden,
              t,
              t_sp,
              gathered ? Wide{1} : t_sp,
              bytes_of(1, s.training.activation_dtype),
              gathered ? "n·h·B (all-gathered)" : "n·h·B/t_sp"};
}

std::string preamble(const Scenario& s, const Dims& d) {
  return fmt::format(
      "n = s·b/c = {}·{}/{} = {} tokens, h = {}, t = {}, B = {}, G = {}: ", s.training.seq_len,
      s.training.micro_batch, s.parallel.cp, group_digits(d.n), group_digits(d.h),
      static_cast<int64_t>(d.t), static_cast<int64_t>(d.bytes), s.conventions.gated_mlp_tensors);
}

void add_standard_attention(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const ModelConfig& m = s.model;
  const Wide a = m.num_heads, g = m.num_kv_heads, hd = m.head_dim;
  sum.add("QKV input", d.in_expr, d.n * d.h * d.bytes / d.t_in);
  sum.add("Q,K,V", "n·(a+2g)·d·B/t", d.n * (a + 2 * g) * hd * d.bytes / d.t);
  if (m.qk_norm || m.qk_norm_full_width)
    sum.add("q/k norm inputs", "n·(a+g)·d·B/t", d.n * (a + g) * hd * d.bytes / d.t);
  sum.add("attention output", "n·a·d·B/t", d.n * a * hd * d.bytes / d.t);
}

void add_mla_attention(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const MlaConfig& mla = s.model.mla;
  const Wide a = s.model.num_heads;
  const Wide qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  sum.add("down-projection input", d.in_expr, d.n * d.h * d.bytes / d.t_in);
  // The low-rank latents are not split by TP: every TP rank computes them.
  if (mla.q_lora_rank > 0)
    sum.add("q latent + its norm", "2·n·q_lora·B", 2 * d.n * mla.q_lora_rank * d.bytes);
  sum.add("kv latent + its norm", "n·(2·kv_lora+rope)·B",
          d.n * (2 * mla.kv_lora_rank + mla.qk_rope_head_dim) * d.bytes);
  sum.add("Q,K", "2·n·a·(nope+rope)·B/t", 2 * d.n * a * qk * d.bytes / d.t);
  sum.add("V", "n·a·v·B/t", d.n * a * mla.v_head_dim * d.bytes / d.t);
  sum.add("attention output", "n·a·v·B/t", d.n * a * mla.v_head_dim * d.bytes / d.t);
}

// The s×s part of attention, or flash attention's softmax statistics.
void add_attention_core(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const Training& tr = s.training;
  const Wide a = s.model.num_heads;
  const bool selective = tr.recompute == Recompute::kSelective;
  if (tr.flash_attention) {
    // Selective recompute re-runs core attention, so its statistics are not kept.
    if (!selective) sum.add("softmax stats", "n·a·4/t", d.n * a * 4 / d.t);
    return;
  }
  if (selective) return;  // Korthikanti's selective recompute drops exactly the 5·a·s² terms
  const Wide s_full = tr.seq_len;  // each CP rank's queries attend to the whole sequence
  sum.add("softmax output", "n·s·a·B/t", d.n * s_full * a * d.bytes / d.t);
  if (tr.dropout) {
    sum.add("attention dropout mask", "n·s·a/t", d.n * s_full * a / d.t);
    sum.add("attention dropout output", "n·s·a·B/t", d.n * s_full * a * d.bytes / d.t);
  }
}

// f-wide tensors a gated (per framework, see Conventions) or plain MLP keeps per token.
Wide mlp_intermediate_factor(const Scenario& s) {
  return s.model.mlp == MlpKind::kGated ? s.conventions.gated_mlp_tensors : 2;
}

void add_dense_mlp(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const ModelConfig& m = s.model;
  sum.add("MLP input", d.in_expr, d.n * d.h * d.bytes / d.t_in);
  const char* expr = m.mlp == MlpKind::kGated ? "G·n·f·B/t" : "2·n·f·B/t";
  sum.add("MLP intermediates", expr, mlp_intermediate_factor(s) * d.n * m.ffn * d.bytes / d.t);
}

void add_moe(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const ModelConfig& m = s.model;
  const MoeConfig& moe = m.moe;
  const Wide etp = s.parallel.etp;
  sum.add("router/expert input", "n·h·B/t_sp", d.n * d.h * d.bytes / d.t_sp);
  sum.add("router scores (fp32)", "2·n·E·4/t_sp", 2 * d.n * moe.num_experts * 4 / d.t_sp);
  // Dispatched token copies on this GPU: every token goes to k experts; EP balances them over
  // the expert group, expert-TP gathers tokens across its etp ranks.
  const Wide routed = d.n * moe.top_k * etp / d.t_sp;
  sum.add("dispatched tokens + expert outputs", "2·n·k·etp·h·B/t_sp", 2 * routed * d.h * d.bytes);
  const char* expr =
      m.mlp == MlpKind::kGated ? "3·n·k·etp·f_e/etp·B/t_sp" : "2·n·k·etp·f_e/etp·B/t_sp";
  sum.add("expert intermediates", expr,
          mlp_intermediate_factor(s) * routed * (moe.expert_ffn / etp) * d.bytes);
  if (moe.shared_experts > 0) {
    const Wide width = moe.shared_experts * moe.shared_expert_ffn;
    const char* sexpr = m.mlp == MlpKind::kGated ? "G·n·S·f_s·B/t" : "2·n·S·f_s·B/t";
    sum.add("shared-expert intermediates", sexpr,
            mlp_intermediate_factor(s) * d.n * width * d.bytes / d.t);
  }
}

// torchtitan's op-level selective checkpointing (torchtitan/distributed/activation_checkpoint.py,
// _custom_policy): inside each layer the outputs of scaled-dot-product attention and of every
// other matmul are saved (the 1st, 3rd, 5th, 7th: wq, wv, w1, w2 in a Llama layer; fc1 in a
// plain MLP); norms, activations and the other matmuls are recomputed from the layer input.
Term op_level_checkpointed_layer(const Scenario& s, const Dims& d, bool explain) {
  const ModelConfig& m = s.model;
  const Wide a = m.num_heads, g = m.num_kv_heads, hd = m.head_dim;
  SumBuilder sum(explain);
  sum.add("layer input", "n·h·B/t_sp", d.n * d.h * d.bytes / d.t_sp);
  sum.add("Q, V (1st, 3rd matmul)", "n·(a+g)·d·B/t", d.n * (a + g) * hd * d.bytes / d.t);
  sum.add("attention output + logsumexp", "n·a·(d·B+4)/t", d.n * a * (hd * d.bytes + 4) / d.t);
  sum.add("MLP up (5th matmul)", "n·f·B/t", d.n * m.ffn * d.bytes / d.t);
  // A row-parallel matmul's output is the full-width partial sum, before its reduce.
  if (m.mlp == MlpKind::kGated) sum.add("MLP down (7th matmul)", "n·h·B", d.n * d.h * d.bytes);
  return sum.finish(preamble(s, d));
}

}  // namespace

Wide tokens_per_rank(const Scenario& s) {
  return Wide{s.training.seq_len} * s.training.micro_batch / s.parallel.cp;
}

Term layer_activations(const Scenario& s, bool moe_layer, bool explain) {
  const Dims d = dims_of(s);
  if (s.training.recompute == Recompute::kSelectiveOp)  // validate.cc: dense, standard attention
    return op_level_checkpointed_layer(s, d, explain);
  SumBuilder sum(explain);
  sum.add("norm inputs", "norms·n·h·B/t_sp",
          Wide{s.model.norms_per_layer} * d.n * d.h * d.bytes / d.t_sp);
  if (s.model.attention == AttentionKind::kMla) {
    add_mla_attention(s, d, sum);
  } else {
    add_standard_attention(s, d, sum);
  }
  add_attention_core(s, d, sum);
  if (s.training.dropout) sum.add("dropout masks", "2·n·h/t_sp", 2 * d.n * d.h / d.t_sp);
  if (moe_layer) {
    add_moe(s, d, sum);
  } else {
    add_dense_mlp(s, d, sum);
  }
  return sum.finish(preamble(s, d));
}

Term recomputed_layer_input(const Scenario& s, bool explain) {
  const Dims d = dims_of(s);
  Term term{d.n * d.h * d.bytes / d.t_sp, ""};
  if (explain)
    term.formula =
        fmt::format("layer input n·h·B/t_sp = {}·{}·{}/{}", group_digits(d.n), group_digits(d.h),
                    static_cast<int64_t>(d.bytes), static_cast<int64_t>(d.t_sp));
  return term;
}

Term embedding_activations(const Scenario& s, bool explain) {
  const Dims d = dims_of(s);
  SumBuilder sum(explain);
  if (s.training.dropout) sum.add("embedding dropout mask", "n·h/t_sp", d.n * d.h / d.t_sp);
  return sum.finish(preamble(s, d));
}

Term head_activations(const Scenario& s, bool explain) {
  const Dims d = dims_of(s);
  SumBuilder sum(explain);
  sum.add("final-norm input", "n·h·B/t_sp", d.n * d.h * d.bytes / d.t_sp);
  sum.add("LM-head input", d.in_expr, d.n * d.h * d.bytes / d.t_in);
  return sum.finish(preamble(s, d));
}

Term logits_and_loss(const Scenario& s, bool explain) {
  const Dims d = dims_of(s);
  const Wide vocab_shard = ceil_div(padded_vocab(s), d.t);
  SumBuilder sum(explain);
  sum.add("logits", "n·⌈V/t⌉·B", d.n * vocab_shard * d.bytes);
  // What the loss keeps beside the logits: fp32 copies (one for Megatron, two for nanotron).
  const Wide loss_extra = std::max<Wide>(s.conventions.loss_bytes_per_logit - d.bytes, 0);
  sum.add("fp32 cross-entropy copies", "n·⌈V/t⌉·(L−B)", d.n * vocab_shard * loss_extra);
  return sum.finish(preamble(s, d) + fmt::format("V = {}: ", group_digits(padded_vocab(s))));
}

}  // namespace vramplan
