// The forward/backward peak with lazily created gradients and one microbatch, late in the
// backward (estimate_parts.h first_layer_backward_moment).
//
// With .grad set to None after each step and one microbatch, the backward creates every gradient
// as it frees the activations: early on it holds all activations and no gradient, at the end
// every gradient and no activation. Its last layer, the model's first (or the first trained one
// after frozen layers), is where most gradients already exist beside one layer's saved tensors.
// Read from the PyTorch reference's live tensors at the peak (transformers' model code, one GPU):
//  - a dense layer: the backward of down_proj, the MLP's last linear, as the layer starts its
//    backward. Every gradient exists but this layer's others (and the input embedding's, made
//    last); down_proj's has just been made. Beside them the layer's saved tensors and what its
//    first backward ops hold (layer_backward_transient); under full recomputation the layer's
//    input and its re-created activations.
//  - an MoE layer (transformers 5's stacked experts, grouped_mm): the backward of the experts'
//    fused gate_up projection. Its expert gradients are then all made, the attention's, the
//    norms' and the router's not (they run later); the MoE block keeps only the router's input
//    and scores and the dispatched tokens, beside the gradient of gate_up's output (k·n·2·f_e),
//    the dispatched tokens' gradient (k·n·h) and the layer's output gradient (n·h). Mixtral:
//    947 MiB of activations and temporaries at the reference's peak, 945 MiB by these terms.
//  - gpt-oss's eager attention with sinks: after the MoE block, the attention's own backward.
//    Softmax over the scores with one sink column (b·a·s·(s+1) in the activation dtype) then
//    makes, in turn, the softmax's input gradient, and for the max subtracted before it a zero
//    tensor and its scatter (max's backward, new_zeros + scatter): three score-sized tensors at
//    once, the saved probabilities freed by then; every gradient exists but the layer's
//    attention's and norms' and the embedding's. gpt-oss-20b at 4,096 tokens: 3 × 2,048.5 MiB
//    beside 4,216.7 MiB of gradients at the reference's peak (full recomputation, fp32, FSDP).
//    Its early twin is the last layer's attention backward, beside every other layer's saved
//    tensors (its own MoE block's freed) and the gradients of the LM head and of that layer's
//    MoE block only: the peak in
//    fp32 (4 × 4,097 MiB score-sized tensors, one of them the first layer's probabilities).
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "training/activations.h"
#include "training/estimate_parts.h"
#include "training/finetune/finetune_rows.h"
#include "vramplan/model/precision.h"

namespace vramplan::estimate_parts {

namespace {

// One GPU running transformers' eager layers, fully trained or after frozen layers and a frozen
// embedding: where the op order above was read. Elsewhere gradients are sharded, bucketed or
// reduced per unit, or adapters change what is saved.
bool moment_modelled(const Scenario& s) {
  const Parallelism& p = s.parallel;
  // Context parallelism shards the sequence only: each rank holds every gradient, as one GPU.
  const bool one_gpu =
      p.tp == 1 && p.pp == 1 && p.ep == 1 && p.dp == 1 && p.fsdp == FsdpMode::kNone && p.zero == 0;
  const Recompute r = s.training.recompute;
  const ModelCode code = s.conventions.model_code;
  return one_gpu && (code == ModelCode::kTransformers || code == ModelCode::kTorchtune) &&
         s.conventions.lazy_gradients && s.finetune.method == FinetuneMethod::kNone &&
         layers_without_backward(s) == s.finetune.freeze_first_layers &&
         s.finetune.freeze_first_layers < s.model.num_layers && !s.offload.any() &&
         !s.conventions.autocast_weight_cache && s.training.fp8 == Fp8Recipe::kNone &&
         !s.model.is_hybrid() && s.images.count == 0 && s.model.num_layers > 0 &&
         (r == Recompute::kNone || (r == Recompute::kFull && s.training.recompute_layers == 0));
}

// What an MoE block holds at its experts' gate_up backward: the router's input and scores and
// the dispatched tokens, beside gate_up's output gradient (k·n·2·f_e), the dispatched tokens'
// gradient (k·n·h) and the layer's output gradient (n·h).
struct ExpertBackward {
  Wide bytes = 0;
  std::string formula;
};

ExpertBackward expert_backward(const Scenario& s, bool explain) {
  const ModelConfig& m = s.model;
  const MoeConfig& e = m.moe;
  const Wide n = tokens_per_rank(s), h = m.hidden;
  const Wide act = bytes_of(1, s.training.activation_dtype);
  const Wide routed = n * e.top_k;
  const Wide expert_bytes =
      autocast_keeps_experts_in_param_dtype(s) ? bytes_of(1, s.training.param_dtype) : act;
  const Wide router_kept = n * h * act + 2 * n * e.num_experts * 4;
  const Wide dispatched = routed * h * expert_bytes;
  const Wide gate_up_grad = routed * 2 * e.expert_ffn * expert_bytes;
  const Wide output_grad = n * h * act;
  ExpertBackward out{router_kept + dispatched + gate_up_grad + dispatched + output_grad, ""};
  if (explain)
    out.formula = fmt::format(
        "router input and scores n·h·B + 2·n·E·4 ({}) + dispatched tokens k·n·h·B ({}), beside "
        "the experts' gate_up backward: its output's gradient k·n·2·f_e·B ({}), the dispatched "
        "tokens' gradient ({}) and the layer's output gradient n·h·B ({})",
        short_bytes(router_kept), short_bytes(dispatched), short_bytes(gate_up_grad),
        short_bytes(dispatched), short_bytes(output_grad));
  return out;
}

// transformers' eager attention with sinks (gpt-oss), not under autocast (its fp32 sinks promote
// the scores: not read).
bool sink_attention_moment(const Scenario& s) {
  return s.conventions.model_code == ModelCode::kTransformers && s.model.attention_sinks &&
         !s.training.flash_attention && !s.conventions.autocast_weight_cache;
}

// One layer's scores with the sink column, b·(a/t)·(s/cp)·(s+1) in the activation dtype: the
// probabilities the softmax keeps, and each of its backward's three tensors.
Wide sink_score_bytes(const Scenario& s) {
  const Wide b = s.training.micro_batch, seq = s.training.seq_len;
  const Wide heads = ceil_div(Wide{s.model.num_heads}, Wide{s.parallel.tp});
  return b * heads * (seq / s.parallel.cp) * (seq + 1) * bytes_of(1, s.training.activation_dtype);
}

// The first layer's attention backward in a sink-attention model (above): its pending gradients
// (attention, norms, embedding) and what is alive, the layer's attention-side saved tensors
// without the freed probabilities beside three score-sized tensors.
FirstLayerMoment sink_attention_backward(const Scenario& s, const LayerParams& layer,
                                         Wide attention_part, Wide embedding, Wide grad,
                                         bool explain) {
  const Wide scores = sink_score_bytes(s);
  FirstLayerMoment out;
  out.pending_gradients =
      (layer.attention + layer.attention_replicated + layer.norms + embedding) * grad;
  out.alive = attention_part - scores + 3 * scores;
  if (explain) {
    out.gradients_note = fmt::format(
        "less those not made yet: the first layer's attention and norms{} ({} params)",
        embedding > 0 ? " and the input embedding's" : "",
        group_digits(layer.attention + layer.attention_replicated + layer.norms + embedding));
    out.formula = fmt::format(
        "the first layer's attention-side saved tensors less its probabilities ({}) + the sink "
        "softmax's backward: its input gradient, max's new_zeros and scatter, 3·b·(a/t)·s·(s+1)·B "
        "({})",
        short_bytes(attention_part - scores), short_bytes(3 * scores));
  }
  return out;
}

// The early twin: the last layer's attention backward (above), without recomputation. Made by
// then: the LM head's, the final norm's and that layer's MoE block's gradients.
FirstLayerMoment sink_attention_backward_early(const Context& c, Wide layer_activations, Wide grad,
                                               bool explain) {
  const Scenario& s = c.s;
  const ParamCounts& n = c.counts;
  const LayerParams& last = n.layers.back();
  const Wide scores = sink_score_bytes(s);
  const Wide made = n.lm_head + n.final_norm + last.mlp + last.router + last.routed_experts;
  const Wide trained = n.total - n.buffers - n.vision;
  FirstLayerMoment out;
  out.pending_gradients = std::max<Wide>(trained - made, 0) * grad;
  // The last layer's MoE block has run its backward and freed what it saved.
  const Wide kept = layer_activations - moe_block_activations(s) - scores;
  out.alive = kept + 3 * scores;
  if (explain) {
    out.gradients_note = fmt::format(
        "only the LM head's, the final norm's and the last layer's MoE block's made ({} params)",
        group_digits(made));
    out.formula = fmt::format(
        "every layer's saved tensors less the last layer's MoE block's and probabilities ({}) + "
        "its sink softmax's backward: input gradient, max's new_zeros and scatter, "
        "3·b·(a/t)·s·(s+1)·B ({})",
        short_bytes(kept), short_bytes(3 * scores));
  }
  return out;
}

}  // namespace

std::optional<FirstLayerMoment> first_layer_backward_moment(const Context& c,
                                                            Wide layer_activations) {
  const Scenario& s = c.s;
  if (!moment_modelled(s)) return std::nullopt;
  const ModelConfig& m = s.model;
  // The first layer the backward reaches last: the model's first, or the first one trained
  // where frozen layers (and the embedding) come before it.
  const auto first = static_cast<size_t>(s.finetune.freeze_first_layers);
  const LayerParams& layer = c.counts.layers[first];
  const bool moe = m.is_moe() && m.moe_layers[first];
  const Wide grad = bytes_of(1, gradient_dtype(s.training));  // the gradients row's dtype
  // The input embedding's gradient comes last, unless the LM head (tied) made it already or it
  // is frozen.
  const bool embedding_trained = !s.finetune.freeze_embeddings && first == 0;
  const Wide embedding = m.tied_embeddings || !embedding_trained
                             ? 0
                             : c.counts.embedding + c.counts.position_embedding;
  const char* whose = first == 0 ? "the first layer's" : "the first trained layer's";
  FirstLayerMoment out;
  if (!moe) {
    const Wide down = layer.mlp / (m.mlp == MlpKind::kGated ? 3 : 2);
    const Wide pending = layer.total() - layer.buffers - down + embedding;
    out.pending_gradients = pending * grad;
    const Term transient = layer_backward_transient(s, false, c.explain);
    const bool full = s.training.recompute == Recompute::kFull;
    const Wide saved = c.dense_layer.bytes + (full ? c.layer_input.bytes : 0) -
                       (full ? 0 : first_trained_layer_saving(s, false).bytes);
    out.alive = saved + transient.bytes;
    if (c.explain) {
      out.gradients_note =
          fmt::format("less those not made yet: {} but down_proj's{} ({} params)", whose,
                      embedding > 0 ? " and the input embedding's" : "", group_digits(pending));
      out.formula = fmt::format("{} saved tensors{} ({}) + its backward's first gradients ({})",
                                whose, full ? ", re-created, and its kept input" : "",
                                short_bytes(saved), transient.formula);
    }
    return out;
  }
  const bool full = s.training.recompute == Recompute::kFull;
  // The attention side of the layer: re-created under full recomputation, with its kept input.
  const Wide attention_part = c.moe_layer.bytes - moe_block_activations(s) +
                              (full ? c.layer_input.bytes : 0) -
                              (full ? 0 : first_trained_layer_saving(s, false).bytes);
  std::optional<FirstLayerMoment> sinks;
  if (sink_attention_moment(s))
    sinks = sink_attention_backward(s, layer, attention_part, embedding, grad, c.explain);
  if (full) return sinks;  // the experts' moment under full recomputation: not read
  // Without recomputation the early twin (every layer's saved tensors) can hold more.
  if (sinks && first == 0 && !s.finetune.freeze_embeddings) {
    FirstLayerMoment early = sink_attention_backward_early(c, layer_activations, grad, c.explain);
    if (early.alive - early.pending_gradients > sinks->alive - sinks->pending_gradients)
      sinks = std::move(early);
  }
  const Wide pending = layer.attention + layer.attention_replicated + layer.norms + layer.router +
                       layer.indexer + embedding;
  out.pending_gradients = pending * grad;
  const ExpertBackward experts = expert_backward(s, c.explain);
  out.alive = attention_part + experts.bytes;
  if (c.explain) {
    out.gradients_note =
        fmt::format("less those not made yet: {} attention, norms and router{} ({} params)", whose,
                    embedding > 0 ? ", the input embedding" : "", group_digits(pending));
    out.formula = fmt::format("{} attention-side saved tensors ({}) + {}", whose,
                              short_bytes(attention_part), experts.formula);
  }
  // The later moment wins where it holds more beyond the gradients still to come.
  if (sinks && sinks->alive - sinks->pending_gradients > out.alive - out.pending_gradients)
    return sinks;
  return out;
}

}  // namespace vramplan::estimate_parts
