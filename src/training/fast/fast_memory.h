// The planner's memory hot path: the peak that estimate() reports, computed for millions of
// layouts without strings, rows or allocation. Prepared once per (model, training, precision,
// overheads, conventions); a layout changes only the parallelism, the batch and the recompute
// mode. Every formula here mirrors one in estimate.cc / activations.cc /
// model_states.cc / pipeline.cc term by term, with the same integer rounding, and
// fast_memory_test.cc checks bit-for-bit equality with estimate() over thousands of layouts.
//
// The work splits the way the planner's loops nest, so that each part is computed once per branch:
//   PipelineShape  (pp, vpp, split)                    which layers each distinct rank holds
//   states_bytes   (+ tp, ep·etp, dp·cp, sharding)     weights, gradients, optimizer, gathers
//   ActivationTerms(tp, sp, cp, micro-batch, etp, recompute)   bytes per layer and microbatch
//   peak           (+ schedule, microbatches)          the worst rank's allocated/reserved/device
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/term.h"
#include "training/model_states.h"
#include "vramplan/base/error.h"
#include "vramplan/model/params.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// Estimate::peak's three figures for one layout.
struct FastPeak {
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  int64_t device_bytes = 0;
  int64_t host_bytes = 0;  // offloaded rows (one rank); only estimate() computes them
  bool overflow = false;   // estimate() rejects the layout: a GPU's bytes pass 2^62
  bool fallback = false;   // computed by estimate() itself (see FastMemoryModel::evaluate)
};

// Distinct layer parameter shapes a model may have on the fast path (a dense layer, an MoE layer:
// usually one or two). Models with more are evaluated by estimate() instead.
inline constexpr int kMaxLayerClasses = 4;
// Distinct pipeline ranks a layout may have on the fast path (typically first, middle, last).
inline constexpr int kMaxRankGroups = 32;
// Virtual stages the fast path lays out; more go to estimate().
inline constexpr int kMaxFastVpp = 64;

// Pipeline ranks holding exactly the same things. Every schedule keeps the most microbatches in
// flight on the lowest rank, so the group's first rank alone decides the group's peak.
struct RankGroup {
  int64_t first_rank = 0;
  std::array<int64_t, kMaxLayerClasses> class_layers{};  // decoder layers of each class held
  std::array<int64_t, kMaxLayerClasses> last_chunk_class_layers{};  // ... in its last chunk
  // Decoder layers of each of its model chunks (virtual stage order), for the interleaved peak
  // of unequal chunks (pipeline.h in_flight_layers); `layers` their sum.
  std::array<int64_t, kMaxFastVpp> chunk_layers{};
  int64_t layers = 0;
  bool unequal_chunks = false;
  // The interleaved schedule's alive layers stop depending on the microbatch count from
  // `steady_from` microbatches on (the warm-up and one period fit in them): computed once.
  int64_t steady_from = 0;
  InFlightLayers steady;
  bool has_embedding = false;
  bool has_head = false;
  // Layers whose activations are stored, without and with full recompute (which keeps only the
  // input of its recomputed layers).
  int64_t stored_dense = 0, stored_moe = 0;
  int64_t full_dense = 0, full_moe = 0, full_recomputed = 0;
};

// Which layers each distinct pipeline rank holds, for one (pp, vpp, split).
struct PipelineShape {
  int64_t pp = 1;
  int64_t vpp = 1;
  int groups = 0;
  bool fast = true;  // false: more distinct ranks than kMaxRankGroups, or a split estimate()
                     // lays out past the last layer; such layouts go to estimate()
  std::array<RankGroup, kMaxRankGroups> group;
};

// One layer's activations per microbatch and the other per-microbatch terms (activations.cc).
struct ActivationTerms {
  Wide dense_layer = 0;
  Wide moe_layer = 0;
  Wide layer_input = 0;  // what a fully recomputed layer keeps
  Wide embedding = 0;
  Wide head = 0;            // final-norm and LM-head inputs
  Wide logits = 0;          // logits + cross-entropy copies
  Wide loss_transient = 0;  // of logits, the backward's part held once (loss_backward_transient)
  Wide last_output = 0;     // one microbatch's logits kept by the pipeline's last stage
};

// One rank group's model states, split by the phases that drop parts of them (estimate.cc
// settle_peak_phase).
struct RankStates {
  Wide states = 0;     // every model-state row
  Wide gradients = 0;  // of which the gradient row (absent in some phases with lazy gradients)
  // Of which the stage kept unsharded (Conventions::pipeline_fsdp_unsharded): absent at the
  // optimizer step; chunk_by_chunk_saving less when the backward runs chunk by chunk
  // (backward_chunk_by_chunk): the unsharded gradients of every chunk but the last.
  bool unsharded_stage = false;
  Wide unsharded = 0;
  Wide chunk_by_chunk_saving = 0;
  // Of `unsharded`, one FSDP unit's gradients, which the freed logits' memory hides
  // (estimate_activations.cc).
  Wide unit_gradients = 0;
  // Of `unsharded`, the layers prefetched in the backward (fsdp_backward_prefetched_params),
  // which the freed logits' memory hides as well.
  Wide prefetched = 0;
  // Of `unit_gradients`, the reduce-scatter input of a mixed-precision policy, which one freed
  // layer's activations hide (estimate_activations.cc reduce_scatter_input_part).
  Wide unit_reduce_part = 0;
  // Its reduce-scatter output (the unit's sharded gradients), present at that moment where the
  // forward/backward otherwise holds no gradients.
  Wide unit_reduce_output = 0;
  // The first layer's gathered bytes, resharded after its backward
  // (fsdp_resharded_after_backward_params).
  Wide resharded_first = 0;
  // GEMM workspaces (estimate.cc add_beyond_tensors): alive in every phase; the grouped-GEMM
  // ones only on ranks holding an MoE layer.
  Wide workspaces = 0;
  bool operator==(const RankStates&) const = default;
};

// The parameters on one rank group's ranks (model_states.cc GpuParams): fixed by the group, tp,
// ep·etp and vpp, the same for every sharding.
struct RankParams {
  Wide dense = 0, expert = 0, non_matrix = 0, vectors = 0, largest_unit = 0;
  Wide largest_layer = 0, root = 0;
  Wide last_chunk = 0;            // of dense + expert, in the rank's last model chunk
  Wide whole_embedding_grad = 0;  // GpuParams::whole_embedding_grad
};

// The layer-microbatches a rank group's rank holds at its activation peak: fixed by the
// schedule and the microbatch count, whatever the micro-batch's size or the recompute mode.
struct RankAlive {
  int64_t in_flight = 0;  // in_flight_chunks
  InFlightLayers layers;
};

// Decoder layers pipeline chunk `chunk` holds (pipeline.cc's chunk_sizes; negative = none).
// REQUIRES: validate_pipeline passes for `num_layers` and `parallel`.
int64_t chunk_layers(int64_t num_layers, const Parallelism& parallel, int64_t chunk);

class FastMemoryModel {
 public:
  // Errors: the model is invalid (validate_model).
  static Result<FastMemoryModel> prepare(const Scenario& base);

  // Estimate::peak of `layout`: base with `parallel` and training.micro_batch, global_batch and
  // recompute changed. REQUIRES: validate_scenario(layout) passes; everything else equals the base.
  // Layouts outside the fast path (see PipelineShape::fast, kMaxLayerClasses) are computed by
  // estimate() and marked fallback.
  FastPeak evaluate(const Scenario& layout) const;

  // --- The parts, for callers that hoist them out of loops (the planner). ---
  // false: always use estimate() — too many layer shapes, or framework conventions and
  // fine-tuning rows the fast path does not model.
  bool fast() const { return classes_ <= kMaxLayerClasses && conventions_modelled_; }
  // REQUIRES: validate_pipeline passes for this model and `parallel`.
  PipelineShape shape(const Parallelism& parallel) const;
  // Model-state bytes (weights, gradients, master weights, optimizer states, FSDP/ZeRO-3 gather
  // buffers) on each group's ranks. `out` has shape.groups entries.
  void states_bytes(const PipelineShape& shape, const Parallelism& parallel, RankStates* out) const;
  // The same in two steps, the first hoisted out of a loop over shardings: each group's
  // parameters (`out` has shape.groups entries), then the states of one sharding from them.
  void params_of(const PipelineShape& shape, const Parallelism& parallel, RankParams* out) const;
  void states_bytes(const PipelineShape& shape, const RankParams* params,
                    const Parallelism& parallel, RankStates* out) const;
  ActivationTerms activations(const Parallelism& parallel, int64_t micro_batch,
                              Recompute recompute) const;
  // Allocated bytes of one group's rank other than model states and workspaces (activations,
  // head). `reserved_only`, when given, receives the recompute working set's part hidden under
  // the freed logits, which counts toward reserved memory only (estimate_activations.cc).
  // `persistent`, when given, receives the part of it that outlives the step (the last stage's
  // kept outputs), which the optimizer step holds too. `freed_loss`, when given, receives the
  // logits' and loss's bytes the recompute working set left for FSDP's unit gradients, and
  // `layer_freed` what the first layer to run its backward frees by its post-backward
  // (estimate_activations.cc fsdp_post_backward_freed), `layers_held` the decoder layers it holds.
  Wide other_allocated(const RankGroup& group, const ActivationTerms& terms,
                       const Parallelism& parallel, Recompute recompute, int64_t microbatches,
                       Wide* reserved_only = nullptr, Wide* persistent = nullptr,
                       Wide* freed_loss = nullptr, Wide* layer_freed = nullptr,
                       int64_t* layers_held = nullptr) const;
  // The same with the group's alive layers given (alive(group, parallel, microbatches)), for
  // callers that keep them across micro-batch sizes and recompute modes.
  Wide other_allocated(const RankGroup& group, const RankAlive& alive, const ActivationTerms& terms,
                       const Parallelism& parallel, Recompute recompute, int64_t microbatches,
                       Wide* reserved_only = nullptr, Wide* persistent = nullptr,
                       Wide* freed_loss = nullptr, Wide* layer_freed = nullptr,
                       int64_t* layers_held = nullptr) const;
  RankAlive alive(const RankGroup& group, const Parallelism& parallel, int64_t microbatches) const;
  // One rank's allocated peak from its parts, as estimate.cc picks the larger phase: with lazy
  // gradients and one microbatch per step (or a stage kept unsharded) the backward holds no
  // sharded gradients; the optimizer step holds no activations nor unsharded stage.
  // `freed_loss` (from other_allocated) hides FSDP's backward prefetch and unit gradients in
  // the forward/backward phase, `layer_freed` the unit gradients besides; `hidden`, when given,
  // receives that part, which counts toward reserved memory only.
  Wide rank_peak(const RankStates& states, Wide other, int64_t microbatches,
                 const Parallelism& parallel, bool* forward_backward_peak = nullptr,
                 Wide persistent = 0, Wide freed_loss = 0, Wide* hidden = nullptr,
                 Wide layer_freed = 0, int64_t layers_held = 0) const;
  // A lower bound of rank_peak over every activation size and microbatch count.
  Wide states_floor(const RankStates& states) const;
  // Allocated -> reserved -> device, as estimate.cc adds the allocator pool, CUDA context and
  // NCCL buffers; overflow when the device total passes 2^62.
  // `reserved_only`: reserved bytes beyond the allocated ones that the pool also covers.
  FastPeak finish(Wide allocated, const Parallelism& parallel, Wide reserved_only = 0) const;
  // Microbatches per step per data-parallel rank (microbatches_of) with the base's global batch.
  int64_t microbatches(const Parallelism& parallel, int64_t micro_batch) const;

  const Scenario& base() const { return base_; }

 private:
  struct LayerClass {
    LayerParams params;
    bool moe = false;
  };
  struct Share {
    Wide dense = 0, expert = 0, non_matrix = 0;
  };
  using Params = RankParams;

  FastMemoryModel() = default;
  Params rank_params(const RankGroup& group, const Parallelism& parallel) const;
  RankStates states_of(const Params& params, const Sharding& sharding,
                       const Parallelism& parallel) const;
  Wide gradients_of(const Params& params, const Sharding& sharding) const;
  Wide shard_of(const Params& params, const Sharding& sharding, bool sharded) const;
  bool holds_moe_layer(const RankGroup& group) const;
  Wide optimizer_bytes(Wide params, Wide non_matrix, Wide vectors) const;
  Wide layer_activations(const Parallelism& parallel, int64_t micro_batch, Recompute recompute,
                         bool moe_layer) const;
  int64_t padded_vocab_of(int64_t tp) const;
  void add_rank(const Parallelism& parallel, int64_t rank, PipelineShape& out) const;

  Scenario base_;
  ParamCounts counts_;
  int classes_ = 0;
  bool conventions_modelled_ = true;
  std::array<LayerClass, kMaxLayerClasses> class_{};
  // prefix_[c][i]: layers of class c among layers [0, i); moe_prefix_ likewise for MoE layers.
  std::vector<std::array<int32_t, kMaxLayerClasses>> prefix_;
  std::vector<int32_t> moe_prefix_;
};

}  // namespace vramplan
