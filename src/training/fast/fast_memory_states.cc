// FastMemoryModel's model states per rank group (model_states.cc gpu_params, estimate.cc
// add_model_states) and a rank's peak from its parts (estimate.cc settle_peak_phase).
#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

#include "training/activations.h"
#include "training/chunk_split.h"
#include "training/fast/fast_memory.h"
#include "training/model_states.h"
#include "training/pipeline.h"
#include "training/scenario_checks.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/precision.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/finetune.h"

namespace vramplan {

// ---------------------------------------------------------------------------------------------
// Model states (model_states.cc gpu_params + estimate.cc add_model_states).

FastMemoryModel::Params FastMemoryModel::rank_params(const RankGroup& group,
                                                     const Parallelism& par) const {
  const ModelConfig& m = base_.model;
  auto share_of = [&](const LayerParams& p) {
    return Share{ceil_div(Wide{p.attention} + p.mlp, par.tp) + Wide{p.attention_replicated} +
                     p.norms + p.router,
                 divide(p.routed_experts, Wide{par.ep} * par.etp), Wide{p.norms} + p.router};
  };
  Params g;
  for (int c = 0; c < classes_; ++c) {
    const int64_t count = group.class_layers[c];
    if (count == 0) continue;
    const Share share = share_of(class_[c].params);
    g.dense += count * share.dense;
    g.expert += count * share.expert;
    g.non_matrix += count * share.non_matrix;
    g.vectors += count * class_[c].params.norms;
    g.largest_unit = std::max(g.largest_unit, share.dense + share.expert);
    g.largest_layer = std::max(g.largest_layer, share.dense + share.expert);
    g.last_chunk += group.last_chunk_class_layers[c] * (share.dense + share.expert);
  }
  const Wide vocab_shard = ceil_div(padded_vocab_of(par.tp), par.tp) * m.hidden;
  if (group.has_embedding) {
    const Wide embedding = vocab_shard + counts_.position_embedding;
    g.dense += embedding;
    g.non_matrix += embedding;
    g.largest_unit = std::max(g.largest_unit, embedding);
    g.root += embedding;
    g.dense += counts_.vision;  // the vision tower, as gpu_params places it
  }
  g.whole_embedding_grad = whole_embedding_grad_extra(
      base_.conventions, m, par, padded_vocab_of(par.tp), group.has_embedding, group.has_head);
  const Wide before_head = g.dense + g.expert;
  if (group.has_head) {
    const Wide head =
        head_vocab_matrices(m, group.has_embedding) * vocab_shard + counts_.final_norm;
    g.dense += head;
    g.non_matrix += head;
    g.vectors += counts_.final_norm;
    g.largest_unit = std::max(g.largest_unit, head);
    g.root += head;
    if (m.mtp_layers > 0) {
      const Share share = share_of(counts_.mtp_layer);
      const Wide extra = ceil_div(counts_.mtp_extra, par.tp);
      g.dense += m.mtp_layers * (share.dense + extra);
      g.expert += m.mtp_layers * share.expert;
      g.non_matrix += m.mtp_layers * share.non_matrix;
      g.vectors += m.mtp_layers * counts_.mtp_layer.norms;
    }
  }
  // model_states.cc gpu_params: the embedding is on the first chunk, the head on the last.
  g.last_chunk =
      par.vpp == 1 ? g.dense + g.expert : g.last_chunk + g.dense + g.expert - before_head;
  return g;
}

// model_states.cc optimizer_state_bytes without its formula text.
Wide FastMemoryModel::optimizer_bytes(Wide params, Wide non_matrix, Wide vectors) const {
  const Training& tr = base_.training;
  const Wide sb = bytes_of(1, tr.optimizer_state_dtype);
  switch (tr.optimizer) {
    case Optimizer::kAdamW:
      return 2 * params * sb;
    case Optimizer::kAdam8bit:
      return 2 * params + 2 * ceil_div(params, 2048) * 4;
    case Optimizer::kSgd:
      return 0;
    case Optimizer::kSgdMomentum:
    case Optimizer::kLion:
      return params * sb;
    case Optimizer::kAdafactor:
      return (ceil_div(2 * (params - vectors), base_.model.hidden) + vectors) * sb;
    case Optimizer::kMuon:
      return (params - non_matrix) * sb + 2 * non_matrix * sb;
  }
  return 0;
}

Wide FastMemoryModel::shard_of(const Params& g, const Sharding& sh, bool sharded) const {
  const Wide dense_group = sharded ? sh.dense_group : 1;
  const Wide expert_group = sharded ? sh.expert_group : 1;
  return ceil_div(g.dense, dense_group) + ceil_div(g.expert, expert_group);
}

Wide FastMemoryModel::gradients_of(const Params& g, const Sharding& sh) const {
  const Training& tr = base_.training;
  const DType grad_type = gradient_dtype(tr);
  const Wide whole = sh.grads ? 0 : g.whole_embedding_grad;  // tp_embedding_grad_whole
  return ceil_div((shard_of(g, sh, sh.grads) + whole) * bits_of(grad_type), 8);
}

RankStates FastMemoryModel::states_of(const Params& g, const Sharding& sh,
                                      const Parallelism& par) const {
  const Training& tr = base_.training;
  const Wide param_bits = bits_of(tr.param_dtype);
  // estimate.cc add_weights: fp8 casts of the linear weights (parameters are never sharded then).
  const Wide linear = g.dense + g.expert - g.non_matrix;
  Wide total = tr.fp8_params
                   ? ceil_div(g.non_matrix * param_bits, 8) + fp8_weight_bytes(linear, tr.fp8)
                   : ceil_div(shard_of(g, sh, sh.params) * param_bits, 8);
  if (tr.fp8 != Fp8Recipe::kNone)
    total += (tr.fp8_params ? 1 : 2) * fp8_weight_bytes(linear, tr.fp8);
  RankStates out;
  out.gradients = gradients_of(g, sh);
  total += out.gradients;
  const Wide optimizer_params = shard_of(g, sh, sh.optimizer);
  if (keeps_master_weights(tr)) total += ceil_div(optimizer_params * 32, 8);
  const Wide non_matrix = ceil_div(g.non_matrix, sh.optimizer ? sh.dense_group : 1);
  total += optimizer_bytes(optimizer_params, non_matrix,
                           ceil_div(g.vectors, sh.optimizer ? sh.dense_group : 1));
  const bool mixed = base_.conventions.fsdp_mixed_precision;
  // estimate.cc add_unsharded_stage, or the unit-by-unit gather below.
  if (keeps_stage_unsharded(base_.conventions, par, sh.params)) {
    const Wide params = g.dense + g.expert;
    const Wide accumulate_bits = bits_of(mixed ? tr.reduce_dtype : tr.grad_dtype);
    const Wide all_grads = ceil_div(params * accumulate_bits, 8);
    out.unsharded_stage = true;
    out.unsharded = ceil_div(params * bits_of(fsdp_gather_dtype(base_.conventions, tr)), 8) +
                    all_grads +
                    bytes_of(1, mixed ? tr.activation_dtype : tr.grad_dtype) * g.largest_unit;
    out.chunk_by_chunk_saving = all_grads - ceil_div(g.last_chunk * accumulate_bits, 8);
    total += out.unsharded;
  } else if (sh.params) {
    // estimate_states.cc add_gathered_params; FSDP frees them before the optimizer step.
    const Conventions& conv = base_.conventions;
    const Wide gathered = fsdp_gathered_params(conv, par, g.largest_unit, g.largest_layer, g.root,
                                               g.dense + g.expert);
    const Wide grad_unit = fsdp_gradient_unit(conv, par, g.largest_unit, g.largest_layer, g.root);
    const Wide gather_bits = bits_of(fsdp_gather_dtype(conv, tr));
    const Wide grad_bytes = mixed ? bytes_of(1, tr.activation_dtype) + bytes_of(1, tr.reduce_dtype)
                                  : bytes_of(1, tr.grad_dtype);
    // FSDP2's kept all-gather output (fsdp_retained_gather_params) needs transformers' model
    // code, which takes estimate()'s path (FastMemoryModel::fast).
    const Wide bytes = ceil_div(gathered * gather_bits, 8) + grad_bytes * grad_unit;
    if (par.fsdp != FsdpMode::kNone) {
      out.unsharded = bytes;
      out.unit_gradients = grad_bytes * grad_unit;
      out.unit_reduce_part = mixed ? bytes_of(1, tr.reduce_dtype) * grad_unit : 0;
      out.unit_reduce_output = ceil_div(out.unit_reduce_part, sh.dense_group);
      out.resharded_first = ceil_div(
          fsdp_resharded_after_backward_params(conv, par, g.largest_layer) * gather_bits, 8);
      out.prefetched = ceil_div(
          fsdp_backward_prefetched_params(conv, par, g.largest_layer, g.root, g.dense + g.expert) *
              gather_bits,
          8);
    }
    total += bytes;
  }
  out.states = total;
  return out;
}

void FastMemoryModel::states_bytes(const PipelineShape& shape, const Parallelism& par,
                                   RankStates* out) const {
  std::array<RankParams, kMaxRankGroups> params;
  params_of(shape, par, params.data());
  states_bytes(shape, params.data(), par, out);
}

void FastMemoryModel::params_of(const PipelineShape& shape, const Parallelism& par,
                                RankParams* out) const {
  for (int i = 0; i < shape.groups; ++i) out[i] = rank_params(shape.group[i], par);
}

void FastMemoryModel::states_bytes(const PipelineShape& shape, const RankParams* params,
                                   const Parallelism& par, RankStates* out) const {
  const Sharding sh = sharding_of(par);
  for (int i = 0; i < shape.groups; ++i) {
    out[i] = states_of(params[i], sh, par);
    out[i].workspaces =
        base_.overheads.gemm_workspace_bytes +
        grouped_gemm_workspace_bytes(base_.training, holds_moe_layer(shape.group[i]));
  }
}

bool FastMemoryModel::holds_moe_layer(const RankGroup& group) const {
  for (int c = 0; c < std::min(classes_, kMaxLayerClasses); ++c)
    if (class_[c].moe && group.class_layers[c] > 0) return true;
  return false;
}

Wide FastMemoryModel::rank_peak(const RankStates& r, Wide other, int64_t microbatches,
                                const Parallelism& par, bool* forward_backward_peak,
                                Wide persistent, Wide freed_loss, Wide* hidden, Wide layer_freed,
                                int64_t layers_held) const {
  const bool chunk_by_chunk = backward_chunk_by_chunk(par, microbatches);
  const Wide unsharded = r.unsharded - (chunk_by_chunk ? r.chunk_by_chunk_saving : 0);
  const Wide states = r.states - r.unsharded + unsharded;
  const bool grads_absent =
      base_.conventions.lazy_gradients && (microbatches == 1 || r.unsharded_stage);
  // estimate_activations.cc: FSDP's prefetch and unit gradients come after the logits are freed
  const Wide prefetch_hidden = std::min(r.prefetched, freed_loss);
  const Wide first_sharded =
      base_.conventions.lazy_gradients && microbatches == 1 ? r.unit_reduce_output : 0;
  const Wide first_freed = std::max<Wide>(
      layer_freed + (layers_held == 2 ? r.prefetched : 0) + r.resharded_first - first_sharded, 0);
  const Wide unit_hidden =
      prefetch_hidden + std::min(r.unit_gradients, freed_loss - prefetch_hidden +
                                                       std::min(first_freed, r.unit_reduce_part));
  if (hidden) *hidden = unit_hidden;
  Wide absent = grads_absent ? r.gradients : 0;
  if (!grads_absent && base_.conventions.lazy_gradients && par.schedule == Schedule::kGPipe &&
      par.pp > 1 && microbatches > 1)  // estimate.cc settle_peak_phase: one microbatch freed
    absent = std::min(r.gradients, divide(other - persistent, Wide{microbatches} * par.vpp));
  const Wide forward_backward = states + other - unit_hidden + r.workspaces - absent;
  const Wide optimizer_step = states - unsharded + r.workspaces + persistent;
  // estimate.cc settle_peak_phase: the kept outputs merged when the step returns
  const Wide merged = persistent > 0 ? optimizer_step + persistent : 0;
  if (forward_backward_peak)
    *forward_backward_peak = optimizer_step <= forward_backward && merged <= forward_backward;
  return std::max({forward_backward, optimizer_step, merged});
}

Wide FastMemoryModel::states_floor(const RankStates& r) const {
  const Wide droppable = base_.conventions.lazy_gradients ? r.gradients : 0;
  return std::max(r.states - r.chunk_by_chunk_saving - droppable, r.states - r.unsharded) +
         r.workspaces;
}

}  // namespace vramplan
