// The last stage's logits and loss (activations.h): what the cross-entropy keeps per logit,
// a chunked loss's chunk in hand and backward, the backward-only parts of an unfused loss.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "training/activations.h"
#include "training/layers/layer_terms.h"
#include "vramplan/model/precision.h"

namespace vramplan {

Wide chunked_loss_backward_excess(const Conventions& c, bool head_trains, Wide logits,
                                  Wide head_weight, Wide activation_bytes, Wide param_bytes,
                                  Wide forward) {
  const Wide chunks = c.loss_chunks;
  if (chunks <= 1 || !head_trains) return 0;
  const Wide logit_grads = logits * activation_bytes;
  const Wide weight_grad = head_weight * param_bytes;
  const Wide first = logit_grads + weight_grad;
  const Wide second = logit_grads * (chunks - 2) / chunks + 3 * weight_grad;
  return std::max<Wide>(std::max(first, second) - forward, 0);
}

Wide logits_vocab(const Scenario& s) {
  if (!s.parallel.loss_parallel) return padded_vocab(s);
  return ceil_div(padded_vocab(s), s.parallel.tp);
}

Wide loss_backward_transient(const Scenario& s) {
  if (s.conventions.model_code != ModelCode::kTransformers) return 0;
  return tokens_per_rank(s) * logits_vocab(s) * 8;
}

Wide loss_backward_only(const Scenario& s) {
  if (s.conventions.model_code != ModelCode::kTransformers) return 0;
  const Wide b = bytes_of(1, s.training.activation_dtype);
  const Wide forward = b + (b < 4 ? 4 : 0) + 4;
  const Wide backward = std::max<Wide>(s.conventions.loss_bytes_per_logit, b);
  return tokens_per_rank(s) * logits_vocab(s) * std::max<Wide>(backward - forward, 0);
}

Wide loss_chunk_transient(const Conventions& c, Wide logits, Wide activation_bytes) {
  if (c.loss_chunks <= 0) return 0;
  const bool projects = c.loss_bytes_per_logit < activation_bytes + 4;
  const Wide per_logit = (activation_bytes < 4 ? 4 : 0) + (projects ? activation_bytes : 0);
  return ceil_div(logits * per_logit, Wide{c.loss_chunks});
}

Wide last_stage_output_bytes(const Scenario& s) {
  return tokens_per_rank(s) * logits_vocab(s) * bytes_of(1, s.training.activation_dtype);
}

Term logits_and_loss(const Scenario& s, bool explain) {
  const Dims d = dims_of(s);
  const Wide vocab_shard = logits_vocab(s);
  // Without loss parallelism the gathered logits are whole on every TP rank.
  const bool whole = !s.parallel.loss_parallel && d.t > 1;
  const char* per_token = whole ? "n·V" : "n·⌈V/t⌉";
  SumBuilder sum(explain);
  sum.add("logits", fmt::format("{}·B", per_token).c_str(), d.n * vocab_shard * d.bytes);
  // What the loss keeps beside the logits: fp32 copies (one for Megatron, two for nanotron).
  const Wide loss_extra = std::max<Wide>(s.conventions.loss_bytes_per_logit - d.bytes, 0);
  sum.add("fp32 cross-entropy copies", fmt::format("{}·(L−B)", per_token).c_str(),
          d.n * vocab_shard * loss_extra);
  if (const Wide chunk = loss_chunk_transient(s.conventions, d.n * vocab_shard, d.bytes)) {
    const bool projects = s.conventions.loss_bytes_per_logit < d.bytes + 4;
    const std::string expr =
        fmt::format("{}·{}/C, C = {}", per_token, d.bytes >= 4 ? "B" : (projects ? "(4+B)" : "4"),
                    s.conventions.loss_chunks);
    sum.add(
        projects ? "the chunk in hand's logits and fp32 upcast" : "the chunk in hand's fp32 upcast",
        expr.c_str(), chunk);
  }
  const bool head_trains = s.finetune.method == FinetuneMethod::kNone &&
                           !(s.model.tied_embeddings && s.finetune.freeze_embeddings);
  if (const Wide more =
          chunked_loss_backward_excess(s.conventions, head_trains, d.n * vocab_shard,
                                       ceil_div(Wide{padded_vocab(s)}, Wide{s.parallel.tp}) * d.h,
                                       d.bytes, bytes_of(1, s.training.param_dtype), sum.total()))
    sum.add(
        "backward: 3 LM-head weight gradients (chunks summed) beside C−2 chunks' logit "
        "gradients, beyond the forward",
        fmt::format("max({0}·B + {1}·h·B_p, {0}·B·(C−2)/C + 3·{1}·h·B_p) − forward, C = {2}",
                    per_token, whole ? "V" : "⌈V/t⌉", s.conventions.loss_chunks)
            .c_str(),
        more);
  // transformers' Gemma 2 soft-caps the logits (final_logit_softcapping: / cap, tanh, · cap)
  // before the loss; tanh's output is kept for the backward.
  if (s.conventions.model_code == ModelCode::kTransformers && s.model.model_type == "gemma2")
    sum.add("soft-capped logits (tanh output)", fmt::format("{}·B", per_token).c_str(),
            d.n * vocab_shard * d.bytes);
  return sum.finish(preamble(s, d) +
                    fmt::format("V = {}{}: ", group_digits(padded_vocab(s)),
                                whole ? " (gathered to every TP rank: no loss parallelism)" : ""));
}

}  // namespace vramplan
