// FastMemoryModel::rank_peak in 64-bit arithmetic, for the planner's innermost loop (25 million
// rank groups for DeepSeek-V3 on 1,024 GPUs). Where every input lies within ±kNarrowBound, no
// sum or difference rank_peak forms can pass 2^63, so int64 gives exactly its figures; inputs are
// checked once, where they are computed, rather than every sum. 128-bit minima, maxima and sums,
// and rank_peak's ten arguments, were most of the search's cost of a peak.
#pragma once

#include <algorithm>
#include <cstdint>

#include "training/fast/fast_memory.h"
#include "training/pipeline.h"

namespace vramplan {

// 2^56 bytes (64 PiB). rank_peak adds or subtracts at most a dozen of its inputs (or quotients
// of them), which keeps every intermediate below 2^60.
inline constexpr int64_t kNarrowBound = int64_t{1} << 56;

inline bool within_narrow_bound(Wide v) { return v >= -kNarrowBound && v <= kNarrowBound; }

// A rank group's RankStates in 64 bits; `narrow` false where a field is beyond kNarrowBound (the
// others are then meaningless: use rank_peak).
struct NarrowStates {
  int64_t states = 0, gradients = 0, unsharded = 0, chunk_by_chunk_saving = 0;
  int64_t unit_gradients = 0, prefetched = 0, unit_reduce_part = 0, unit_reduce_output = 0;
  int64_t resharded_first = 0, workspaces = 0;
  bool unsharded_stage = false;
  bool narrow = false;
};

inline NarrowStates narrow_states(const RankStates& r) {
  NarrowStates n;
  n.narrow = within_narrow_bound(r.states) && within_narrow_bound(r.gradients) &&
             within_narrow_bound(r.unsharded) && within_narrow_bound(r.chunk_by_chunk_saving) &&
             within_narrow_bound(r.unit_gradients) && within_narrow_bound(r.prefetched) &&
             within_narrow_bound(r.unit_reduce_part) && within_narrow_bound(r.unit_reduce_output) &&
             within_narrow_bound(r.resharded_first) && within_narrow_bound(r.workspaces);
  if (!n.narrow) return n;
  n.states = static_cast<int64_t>(r.states);
  n.gradients = static_cast<int64_t>(r.gradients);
  n.unsharded = static_cast<int64_t>(r.unsharded);
  n.chunk_by_chunk_saving = static_cast<int64_t>(r.chunk_by_chunk_saving);
  n.unit_gradients = static_cast<int64_t>(r.unit_gradients);
  n.prefetched = static_cast<int64_t>(r.prefetched);
  n.unit_reduce_part = static_cast<int64_t>(r.unit_reduce_part);
  n.unit_reduce_output = static_cast<int64_t>(r.unit_reduce_output);
  n.resharded_first = static_cast<int64_t>(r.resharded_first);
  n.workspaces = static_cast<int64_t>(r.workspaces);
  n.unsharded_stage = r.unsharded_stage;
  return n;
}

// What other_allocated reports of one rank group, as rank_peak takes it (`narrow` as above).
struct NarrowOther {
  int64_t other = 0, reserved_only = 0, persistent = 0, freed_loss = 0, layer_freed = 0;
  int64_t layers_held = 0;
  bool narrow = false;
};

inline NarrowOther narrow_other(Wide other, Wide reserved_only, Wide persistent, Wide freed_loss,
                                Wide layer_freed, int64_t layers_held) {
  NarrowOther n;
  n.narrow = within_narrow_bound(other) && within_narrow_bound(reserved_only) &&
             within_narrow_bound(persistent) && within_narrow_bound(freed_loss) &&
             within_narrow_bound(layer_freed);
  if (!n.narrow) return n;
  n.other = static_cast<int64_t>(other);
  n.reserved_only = static_cast<int64_t>(reserved_only);
  n.persistent = static_cast<int64_t>(persistent);
  n.freed_loss = static_cast<int64_t>(freed_loss);
  n.layer_freed = static_cast<int64_t>(layer_freed);
  n.layers_held = layers_held;
  return n;
}

// What rank_peak reads of the layout besides its states and activations: fixed for one
// (micro-batch, schedule). `narrow` false where the microbatches are beyond kNarrowBound.
struct PeakPhase {
  int64_t microbatches = 1;
  int64_t vpp = 1;
  bool lazy_gradients = false;
  bool chunk_by_chunk = false;   // backward_chunk_by_chunk
  bool gpipe_frees_one = false;  // lazy gradients, GPipe over pp > 1, more than one microbatch
  bool narrow = false;
};

inline PeakPhase peak_phase(const Conventions& conventions, const Parallelism& parallel,
                            int64_t microbatches) {
  PeakPhase p;
  p.microbatches = microbatches;
  p.vpp = parallel.vpp;
  p.lazy_gradients = conventions.lazy_gradients;
  p.chunk_by_chunk = backward_chunk_by_chunk(parallel, microbatches);
  p.gpipe_frees_one = conventions.lazy_gradients && parallel.schedule == Schedule::kGPipe &&
                      parallel.pp > 1 && microbatches > 1;
  // microbatches · vpp, a divisor below, stays within 2^62.
  p.narrow = microbatches >= 1 && microbatches <= kNarrowBound && parallel.vpp >= 1 &&
             parallel.vpp <= kMaxFastVpp;
  return p;
}

// rank_peak's allocated bytes, and the reserved-only bytes the search counts beside them: the
// recompute working set's (`o.reserved_only`) and the FSDP unit's hidden under the freed logits
// when the forward/backward phase is the peak, none otherwise.
struct NarrowPeak {
  int64_t allocated = 0;
  int64_t reserved_only = 0;
};

// REQUIRES: r.narrow, o.narrow, p.narrow. Mirrors FastMemoryModel::rank_peak line by line.
// Always inlined: GCC at -O2 left it a call from the search's loop, whose arguments and result
// went through memory.
[[gnu::always_inline]] inline NarrowPeak narrow_rank_peak(const NarrowStates& r,
                                                          const NarrowOther& o,
                                                          const PeakPhase& p) {
  const int64_t unsharded = r.unsharded - (p.chunk_by_chunk ? r.chunk_by_chunk_saving : 0);
  const int64_t states = r.states - r.unsharded + unsharded;
  const bool single = p.microbatches == 1;
  const bool grads_absent = p.lazy_gradients && (single || r.unsharded_stage);
  const int64_t prefetch_hidden = std::min(r.prefetched, o.freed_loss);
  const int64_t first_sharded = p.lazy_gradients && single ? r.unit_reduce_output : 0;
  const int64_t first_freed = std::max<int64_t>(
      o.layer_freed + (o.layers_held == 2 ? r.prefetched : 0) + r.resharded_first - first_sharded,
      0);
  const int64_t unit_hidden =
      prefetch_hidden + std::min(r.unit_gradients, o.freed_loss - prefetch_hidden +
                                                       std::min(first_freed, r.unit_reduce_part));
  int64_t absent = grads_absent ? r.gradients : 0;
  // Truncates toward zero, as rank_peak's divide does.
  if (!grads_absent && p.gpipe_frees_one)
    absent = std::min(r.gradients, (o.other - o.persistent) / (p.microbatches * p.vpp));
  const int64_t forward_backward = states + o.other - unit_hidden + r.workspaces - absent;
  const int64_t optimizer_step = states - unsharded + r.workspaces + o.persistent;
  const int64_t merged = o.persistent > 0 ? optimizer_step + o.persistent : 0;
  const bool forward_backward_peak =
      optimizer_step <= forward_backward && merged <= forward_backward;
  return {std::max({forward_backward, optimizer_step, merged}),
          forward_backward_peak ? o.reserved_only + unit_hidden : 0};
}

}  // namespace vramplan
