#include "training/fast/fast_memory.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "training/activations.h"
#include "training/chunk_split.h"
#include "training/model_states.h"
#include "training/pipeline.h"
#include "training/scenario_checks.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/precision.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/finetune.h"

namespace vramplan {
namespace {

bool same_params(const LayerParams& a, const LayerParams& b) {
  return a.attention == b.attention && a.attention_replicated == b.attention_replicated &&
         a.norms == b.norms && a.mlp == b.mlp && a.router == b.router && a.buffers == b.buffers &&
         a.routed_experts == b.routed_experts && a.active_routed_experts == b.active_routed_experts;
}

bool same_content(const RankGroup& a, const RankGroup& b) {
  return a.class_layers == b.class_layers &&
         a.last_chunk_class_layers == b.last_chunk_class_layers &&
         a.chunk_layers == b.chunk_layers && a.has_embedding == b.has_embedding &&
         a.has_head == b.has_head && a.stored_dense == b.stored_dense &&
         a.stored_moe == b.stored_moe && a.full_dense == b.full_dense && a.full_moe == b.full_moe &&
         a.full_recomputed == b.full_recomputed;
}

// Decoder layers of pipeline chunk `i` and the first layer it holds (chunk_split.h, as
// layout_pipeline lays them out; a negative size holds no layers).
struct ChunkSpan {
  int64_t start = 0;
  int64_t size = 0;
};

ChunkSpan chunk_span(int64_t num_layers, const Parallelism& par, int64_t i) {
  const ChunkSplit split(num_layers, par);
  return {split.begin(i), split.size(i)};
}

int64_t nccl_group_count(const Parallelism& p) {
  return (p.tp > 1) + (p.pp > 1) + (p.dp > 1) + (p.cp > 1) + (p.ep > 1) + (p.etp > 1);
}

}  // namespace

int64_t chunk_layers(int64_t num_layers, const Parallelism& parallel, int64_t chunk) {
  return chunk_span(num_layers, parallel, chunk).size;
}

Result<FastMemoryModel> FastMemoryModel::prepare(const Scenario& base) {
  if (auto error = validate_model(base.model)) return *error;
  FastMemoryModel m;
  m.base_ = base;
  m.counts_ = count_parameters(base.model);
  // What the fast path mirrors of estimate(): the generic conventions. Frameworks that add
  // rows (DDP buckets, autocast copies, ZeRO buckets, optimizer temporaries, Megatron's fp32
  // gradient copy and attention-scores buffer), nanotron's all-gather buffer and compute-cost
  // split, CUDA-graph pools, fine-tuning, offload, images, hybrid layers (Mamba, DeltaNet,
  // cross-attention: the fast path prices every layer as attention) and transformers' model
  // code go through estimate() itself.
  const Conventions& conv = base.conventions;
  m.conventions_modelled_ =
      !conv.ddp_bucket_copy && !conv.autocast_weight_cache && conv.comm_bucket_elements == 0 &&
      !conv.optimizer_foreach_temporaries && !conv.tp_allgather_buffer &&
      !base.parallel.compute_balanced_split && !has_attention_scores_buffer(base) &&
      !has_fp32_grad_copy(base) && !finetune_active(base.finetune) &&
      conv.model_code == ModelCode::kDefault && !base.overheads.per_layer_cuda_graphs &&
      !base.offload.any() && base.images.count == 0 && !base.model.is_hybrid();
  const ModelConfig& model = base.model;
  const size_t layers = static_cast<size_t>(model.num_layers);
  m.prefix_.assign(layers + 1, {});
  m.moe_prefix_.assign(layers + 1, 0);
  for (size_t i = 0; i < layers; ++i) {
    const bool moe = model.is_moe() && model.moe_layers[i];
    const LayerParams& p = m.counts_.layers[i];
    int c = 0;
    while (c < m.classes_ && c < kMaxLayerClasses &&
           !(m.class_[c].moe == moe && same_params(m.class_[c].params, p)))
      ++c;
    if (c == m.classes_) {
      if (m.classes_ == kMaxLayerClasses) {
        m.classes_ = kMaxLayerClasses + 1;  // too varied for the fast path
        break;
      }
      m.class_[c] = {p, moe};
      ++m.classes_;
    }
    m.prefix_[i + 1] = m.prefix_[i];
    ++m.prefix_[i + 1][c];
    m.moe_prefix_[i + 1] = m.moe_prefix_[i] + (moe ? 1 : 0);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Pipeline shape (pipeline.cc layout_pipeline + estimate.cc layer_mix).

void FastMemoryModel::add_rank(const Parallelism& par, int64_t rank, PipelineShape& out) const {
  RankGroup g;
  g.first_rank = rank;
  g.has_embedding = rank == 0;
  g.has_head = rank == par.pp - 1;
  const int64_t recompute_layers = base_.training.recompute_layers;
  const int64_t recomputed_limit =
      recompute_layers == 0 ? std::numeric_limits<int64_t>::max() : recompute_layers * par.vpp;
  int64_t seen = 0;  // layers of this rank in earlier chunks
  for (int64_t k = 0; k < par.vpp; ++k) {
    const ChunkSpan span = chunk_span(base_.model.num_layers, par, rank + k * par.pp);
    const int64_t size = std::max<int64_t>(span.size, 0);
    g.chunk_layers[static_cast<size_t>(k)] = size;
    g.layers += size;
    const size_t begin = static_cast<size_t>(span.start);
    const size_t end = static_cast<size_t>(span.start + size);
    for (int c = 0; c < classes_; ++c) {
      const int64_t count = prefix_[end][c] - prefix_[begin][c];
      g.class_layers[c] += count;
      if (k == par.vpp - 1) g.last_chunk_class_layers[c] = count;
    }
    const int64_t moe = moe_prefix_[end] - moe_prefix_[begin];
    g.stored_moe += moe;
    g.stored_dense += size - moe;
    // Megatron's block method recomputes the first layers of the rank's list.
    const int64_t take = std::clamp<int64_t>(recomputed_limit - seen, 0, size);
    const int64_t moe_kept = moe_prefix_[end] - moe_prefix_[begin + static_cast<size_t>(take)];
    g.full_recomputed += take;
    g.full_moe += moe_kept;
    g.full_dense += size - take - moe_kept;
    seen += size;
  }
  for (int64_t k = 1; k < par.vpp; ++k)
    g.unequal_chunks =
        g.unequal_chunks || g.chunk_layers[static_cast<size_t>(k)] != g.chunk_layers[0];
  if (g.unequal_chunks) {
    Parallelism interleaved = par;
    interleaved.schedule = Schedule::kInterleaved;
    g.steady_from = interleaved_steady_microbatches(par, rank);
    g.steady = in_flight_layers(interleaved, rank, g.steady_from,
                                std::span(g.chunk_layers.data(), static_cast<size_t>(par.vpp)));
  }
  for (int i = 0; i < out.groups; ++i)
    if (same_content(out.group[i], g)) return;  // an earlier rank holds the same: it peaks higher
  if (out.groups == kMaxRankGroups) {
    out.fast = false;
    return;
  }
  out.group[out.groups++] = g;
}

PipelineShape FastMemoryModel::shape(const Parallelism& par) const {
  PipelineShape out;
  out.pp = par.pp;
  out.vpp = par.vpp;
  // A split whose first or last chunk would hold fewer than zero layers is laid out by
  // estimate() past the model's last layer; leave such layouts to it.
  const int64_t chunks = par.pp * par.vpp;
  if (par.compute_balanced_split ||  // nanotron's split: estimate() lays it out by compute cost
      par.vpp > kMaxFastVpp || chunk_span(base_.model.num_layers, par, 0).size < 0 ||
      chunk_span(base_.model.num_layers, par, chunks - 1).size < 0) {
    out.fast = false;
    return out;
  }
  for (int64_t r = 0; r < par.pp && out.fast; ++r) add_rank(par, r, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Activations (activations.cc).

int64_t FastMemoryModel::padded_vocab_of(int64_t tp) const {
  const int64_t multiple = base_.conventions.vocab_pad_multiple * tp;
  return (base_.model.vocab + multiple - 1) / multiple * multiple;
}

Wide FastMemoryModel::layer_activations(const Parallelism& par, int64_t micro_batch,
                                        Recompute recompute, bool moe_layer) const {
  const ModelConfig& m = base_.model;
  const Training& tr = base_.training;
  const Wide n = Wide{tr.seq_len} * micro_batch / par.cp;
  const Wide h = m.hidden, t = par.tp;
  const Wide t_sp = (par.sequence_parallel && par.tp > 1) ? t : Wide{1};
  const Wide b = bytes_of(1, tr.activation_dtype);
  const Wide a = m.num_heads;
  const Wide mlp_factor = m.mlp == MlpKind::kGated ? base_.conventions.gated_mlp_tensors : 2;
  const Wide hidden_input = n * h * b / t_sp;
  const Wide t_in = column_input_divisor(par, base_.conventions);
  if (recompute == Recompute::kSelectiveOp) {  // activations.cc op_level_checkpointed_layer
    const Wide a = m.num_heads, g = m.num_kv_heads, hd = m.head_dim;
    Wide kept =
        hidden_input + n * (a + g) * hd * b / t + n * a * (hd * b + 4) / t + n * m.ffn * b / t;
    if (m.mlp == MlpKind::kGated) kept += n * h * b;
    return kept;
  }

  // activations.cc add_linear_input, add_attention_output, add_mlp_intermediates.
  const Fp8Recipe recipe = tr.fp8;
  const bool fp8 = recipe != Fp8Recipe::kNone;
  const Wide linear_input = fp8 ? fp8_activation_bytes(n * h / t_in, recipe) : n * h * b / t_in;
  auto attention_output = [&](Wide width) {
    const Wide kept = n * width * b / t;
    return fp8 ? kept + fp8_activation_bytes(n * width / t, recipe) : kept;
  };
  auto intermediates = [&](Wide values, Wide divisor) {
    if (!fp8) return mlp_factor * values * b / divisor;
    return (mlp_factor - 1) * values * b / divisor + fp8_activation_bytes(values / divisor, recipe);
  };

  Wide sum = Wide{m.norms_per_layer} * n * h * b / t_sp;
  if (m.attention == AttentionKind::kMla) {
    const MlaConfig& mla = m.mla;
    const Wide qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    sum += linear_input;
    if (mla.q_lora_rank > 0) sum += 2 * n * mla.q_lora_rank * b;
    sum += n * (2 * mla.kv_lora_rank + mla.qk_rope_head_dim) * b;
    sum += 2 * n * a * qk * b / t;
    sum += n * a * mla.v_head_dim * b / t;
    sum += attention_output(a * mla.v_head_dim);
  } else {
    const Wide g = m.num_kv_heads, hd = m.head_dim;
    sum += linear_input;
    sum += n * (a + 2 * g) * hd * b / t;
    if (holds_kv_twice(base_)) sum += n * 2 * g * hd * b / t;
    if (m.qk_norm || m.qk_norm_full_width) sum += n * (a + g) * hd * b / t;
    sum += attention_output(a * hd);
  }
  const bool selective = recompute == Recompute::kSelective;
  if (tr.flash_attention) {
    if (!selective) sum += n * a * 4 / t;
  } else if (!selective) {
    const Wide s_full = tr.seq_len;
    sum += n * s_full * a * b / t;
    if (tr.dropout) sum += n * s_full * a / t + n * s_full * a * b / t;
  }
  if (tr.dropout) sum += 2 * n * h / t_sp;
  if (moe_layer) {
    const MoeConfig& moe = m.moe;
    const Wide etp = par.etp;
    sum += hidden_input;  // the router's input stays in the activation dtype
    sum += 2 * n * moe.num_experts * 4 / t_sp;
    const Wide routed = n * moe.top_k * etp / t_sp;
    sum += fp8 ? fp8_activation_bytes(routed * h, recipe) + routed * h * b : 2 * routed * h * b;
    sum += intermediates(routed * (moe.expert_ffn / etp), 1);
    if (moe.shared_experts > 0) {
      if (fp8) sum += fp8_activation_bytes(n * h / t_sp, recipe);
      sum += intermediates(n * (Wide{moe.shared_experts} * moe.shared_expert_ffn), t);
    }
  } else {
    sum += linear_input;
    sum += intermediates(n * m.ffn, t);
  }
  return sum;
}

ActivationTerms FastMemoryModel::activations(const Parallelism& par, int64_t micro_batch,
                                             Recompute recompute) const {
  const ModelConfig& m = base_.model;
  const Training& tr = base_.training;
  const Wide n = Wide{tr.seq_len} * micro_batch / par.cp;
  const Wide h = m.hidden, t = par.tp;
  const Wide t_sp = (par.sequence_parallel && par.tp > 1) ? t : Wide{1};
  const Wide b = bytes_of(1, tr.activation_dtype);
  ActivationTerms out;
  out.dense_layer = layer_activations(par, micro_batch, recompute, false);
  out.moe_layer = m.is_moe() ? layer_activations(par, micro_batch, recompute, true) : 0;
  out.layer_input = n * h * b / t_sp;
  out.embedding = tr.dropout ? n * h / t_sp : 0;
  out.head = n * h * b / t_sp + n * h * b / column_input_divisor(par, base_.conventions);
  // activations.cc logits_vocab: whole on every TP rank without loss parallelism.
  const Wide vocab_shard =
      par.loss_parallel ? ceil_div(padded_vocab_of(par.tp), t) : Wide{padded_vocab_of(par.tp)};
  const Wide loss_extra = std::max<Wide>(base_.conventions.loss_bytes_per_logit - b, 0);
  out.logits = n * vocab_shard * b + n * vocab_shard * loss_extra +
               loss_chunk_transient(base_.conventions, n * vocab_shard, b);
  // The fast path runs no fine-tuning: the head trains unless it is the frozen tied embedding.
  const bool head_trains = !(m.tied_embeddings && base_.finetune.freeze_embeddings);
  // the head's weight gradient is the rank's vocabulary shard, gathered logits or not
  const Wide head_weight = ceil_div(padded_vocab_of(par.tp), t) * h;
  out.logits +=
      chunked_loss_backward_excess(base_.conventions, head_trains, n * vocab_shard, head_weight, b,
                                   bytes_of(1, tr.param_dtype), out.logits);
  if (base_.conventions.model_code == ModelCode::kTransformers)
    out.loss_transient = n * vocab_shard * 8;
  out.last_output = n * vocab_shard * b;
  return out;
}

// ---------------------------------------------------------------------------------------------
// One rank's total (estimate.cc add_activations, add_head_terms, add_beyond_tensors).

RankAlive FastMemoryModel::alive(const RankGroup& group, const Parallelism& par,
                                 int64_t microbatches) const {
  RankAlive out;
  out.in_flight = in_flight_chunks(par, group.first_rank, microbatches);
  // estimate_activations.cc add_activations: the share of the rank's layers alive at the peak.
  const bool played = group.unequal_chunks && par.schedule == Schedule::kInterleaved;
  const int64_t even = out.in_flight * group.layers / par.vpp;
  out.layers =
      !played ? InFlightLayers{even, even}
      : microbatches >= group.steady_from
          ? group.steady
          : in_flight_layers(par, group.first_rank, microbatches,
                             std::span(group.chunk_layers.data(), static_cast<size_t>(par.vpp)));
  return out;
}

Wide FastMemoryModel::other_allocated(const RankGroup& group, const ActivationTerms& terms,
                                      const Parallelism& par, Recompute recompute,
                                      int64_t microbatches, Wide* reserved_only, Wide* persistent,
                                      Wide* freed_loss, Wide* layer_freed,
                                      int64_t* layers_held) const {
  return other_allocated(group, alive(group, par, microbatches), terms, par, recompute,
                         microbatches, reserved_only, persistent, freed_loss, layer_freed,
                         layers_held);
}

Wide FastMemoryModel::other_allocated(const RankGroup& group, const RankAlive& alive_layers,
                                      const ActivationTerms& terms, const Parallelism& par,
                                      Recompute recompute, int64_t microbatches,
                                      Wide* reserved_only, Wide* persistent, Wide* freed_loss,
                                      Wide* layer_freed, int64_t* layers_held) const {
  const ModelConfig& m = base_.model;
  const int64_t in_flight = alive_layers.in_flight;
  const bool full = recompute == Recompute::kFull;
  const Wide dense = full ? group.full_dense : group.stored_dense;
  const Wide moe = full ? group.full_moe : group.stored_moe;
  const Wide recomputed = full ? group.full_recomputed : 0;
  const Wide per_microbatch =
      dense * terms.dense_layer + moe * terms.moe_layer + recomputed * terms.layer_input;
  // The last rank's layers counted at its loss, with the moment of more alive hidden by the
  // loss below.
  const InFlightLayers& alive = alive_layers.layers;
  const int64_t counted = group.has_head ? alive.at_last_chunk : alive.peak;
  const bool uneven = group.layers > 0 && Wide{counted} * par.vpp != Wide{in_flight} * group.layers;
  Wide total = uneven ? divide(per_microbatch * counted, group.layers)
                      : divide(per_microbatch * in_flight, par.vpp);
  const Wide more_alive_elsewhere = uneven && alive.peak > counted
                                        ? divide(per_microbatch * alive.peak, group.layers) - total
                                        : 0;
  const Wide logits_alive = (par.schedule == Schedule::kGPipe && par.pp > 1) ? microbatches : 1;
  const Wide heads = logits_alive * (1 + m.mtp_layers);
  Wide loss = group.has_head ? terms.logits * heads - (heads - 1) * terms.loss_transient : 0;
  Wide stored_layer = 0;  // estimate_activations.cc fsdp_post_backward_freed
  if (dense > 0) stored_layer = std::max(stored_layer, terms.dense_layer);
  if (moe > 0) stored_layer = std::max(stored_layer, terms.moe_layer);
  if (stored_layer == 0 && recomputed > 0) stored_layer = terms.layer_input;
  if (layer_freed) *layer_freed = stored_layer;
  const auto& held = group.class_layers;
  if (layers_held) *layers_held = std::accumulate(held.begin(), held.end(), int64_t{0});
  if (more_alive_elsewhere > 0) {  // estimate_activations.cc kEarlierChunkRow
    const Wide hidden = std::min(more_alive_elsewhere, loss);
    total += more_alive_elsewhere - hidden;
    loss -= hidden;
  }
  if (recomputed > 0) {  // estimate_activations.cc: less the logits and loss freed before it
    const Wide working = std::max(terms.dense_layer, m.is_moe() ? terms.moe_layer : 0);
    total += working - std::min(working, loss);
    if (reserved_only) *reserved_only = std::min(working, loss);
    loss -= std::min(working, loss);
  }
  if (freed_loss) *freed_loss = loss;
  if (base_.conventions.pipeline_keeps_stage_outputs && par.pp > 1) {
    // estimate.cc add_stage_outputs: every in-flight chunk's output except the LM head's input.
    const Wide sent = group.has_head ? Wide{in_flight} * (par.vpp - 1) / par.vpp : Wide{in_flight};
    total += sent * terms.layer_input;
  }
  if (group.has_embedding) total += divide(terms.embedding * in_flight, par.vpp);
  if (group.has_head) {
    const Wide heads = logits_alive * (1 + m.mtp_layers);  // estimate_activations.cc head_loss
    total += terms.head * logits_alive + terms.logits * heads - (heads - 1) * terms.loss_transient;
    if (base_.conventions.pipeline_keeps_last_outputs && par.pp > 1) {
      total += Wide{microbatches} * terms.last_output;
      if (persistent) *persistent = Wide{microbatches} * terms.last_output;
    }
    if (m.mtp_layers > 0)
      total += (m.is_moe() ? terms.moe_layer : terms.dense_layer) * logits_alive * m.mtp_layers;
  }
  return total;
}

FastPeak FastMemoryModel::finish(Wide allocated, const Parallelism& par, Wide reserved_only) const {
  FastPeak out;
  // Past kMaxBytes before the pool, the device total is past it too: overflow either way. Below
  // it the pool is computed in 64 bits, the same value as in 128 (the planner calls this for
  // every layout, and 128-bit float conversions are library calls).
  const Wide counted = allocated + reserved_only;
  if (allocated > kMaxBytes || counted > kMaxBytes) {
    out.overflow = true;
    return out;
  }
  const Overheads& o = base_.overheads;
  const int64_t alloc = static_cast<int64_t>(allocated);
  // estimate_beyond_tensors.cc: the pool is a fraction of every row before it, the reserved-only
  // recompute row included.
  const double pool_bytes =
      static_cast<double>(static_cast<int64_t>(counted)) * o.allocator_fraction;
  if (!(pool_bytes < static_cast<double>(kMaxBytes))) {
    out.overflow = true;
    return out;
  }
  const Wide pool = static_cast<int64_t>(pool_bytes);
  const Wide device = allocated + reserved_only + pool + o.cuda_context_bytes +
                      Wide{nccl_group_count(par)} * o.nccl_bytes_per_group;
  if (device > kMaxBytes) {
    out.overflow = true;
    return out;
  }
  out.allocated_bytes = alloc;
  out.reserved_bytes = static_cast<int64_t>(allocated + reserved_only + pool);
  out.device_bytes = static_cast<int64_t>(device);
  return out;
}

int64_t FastMemoryModel::microbatches(const Parallelism& par, int64_t micro_batch) const {
  const int64_t global = base_.training.global_batch > 0 ? base_.training.global_batch
                                                         : default_global_batch(par, micro_batch);
  return global / (micro_batch * par.dp);
}

FastPeak FastMemoryModel::evaluate(const Scenario& s) const {
  const Parallelism& par = s.parallel;
  PipelineShape shape_of_layout;
  const bool fast_layout = fast() && !par.compute_balanced_split;
  if (fast_layout) shape_of_layout = shape(par);
  if (!fast_layout || !shape_of_layout.fast) {
    Result<Estimate> est = estimate(s, {.explain = false});
    FastPeak out;
    out.fallback = true;
    if (!est.ok()) {
      out.overflow = true;  // a valid layout is rejected only when its bytes overflow
      return out;
    }
    out.allocated_bytes = est->peak.allocated_bytes;
    out.reserved_bytes = est->peak.reserved_bytes;
    out.device_bytes = est->peak.device_bytes;
    out.host_bytes = est->peak.host_bytes;
    return out;
  }
  const int64_t m = microbatches_of(s);
  const ActivationTerms terms = activations(par, s.training.micro_batch, s.training.recompute);
  std::array<RankStates, kMaxRankGroups> states;
  states_bytes(shape_of_layout, par, states.data());
  FastPeak peak;
  for (int i = 0; i < shape_of_layout.groups; ++i) {
    Wide reserved_only = 0, persistent = 0, freed_loss = 0, layer_freed = 0;
    int64_t layers_held = 0;
    const Wide other =
        other_allocated(shape_of_layout.group[i], terms, par, s.training.recompute, m,
                        &reserved_only, &persistent, &freed_loss, &layer_freed, &layers_held);
    Wide hidden = 0;
    bool forward_backward_peak = true;
    const Wide allocated = rank_peak(states[i], other, m, par, &forward_backward_peak, persistent,
                                     freed_loss, &hidden, layer_freed, layers_held);
    const FastPeak rank =
        finish(allocated, par, forward_backward_peak ? reserved_only + hidden : 0);
    if (rank.overflow) return rank;
    if (rank.device_bytes > peak.device_bytes) peak = rank;
  }
  return peak;
}

}  // namespace vramplan
