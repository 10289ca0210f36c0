// A layout's peak is its worst pipeline rank's: the most device memory, then the most allocated
// (estimate() picks its peak stage so). FastMemoryModel::finish turns a rank's allocated bytes
// and the reserved-only bytes beside them into reserved and device bytes by adding the allocator
// pool, a non-negative fraction of their sum, and overheads fixed for the layout (CUDA context,
// NCCL groups): device bytes grow strictly with that sum, and the overflow check with them. So
// the worst rank is the one with the largest (allocated + reserved-only, allocated), and only
// its bytes need finishing — one finish per layout instead of one per rank group.
#pragma once

#include <optional>

#include "training/fast/fast_memory.h"

namespace vramplan {

// One rank group's bytes before finish: its allocated peak and what counts toward reserved
// memory only.
struct RankBytes {
  Wide allocated = 0;
  Wide reserved_only = 0;
};

// Whether device bytes grow strictly with a rank's allocated + reserved-only sum under these
// overheads (none negative), so that the largest sum marks the worst rank.
bool sums_order_peaks(const Overheads& overheads);

// The peak of the worst of `groups` rank groups, as finishing each and keeping the worst would
// give. Falls back to finishing each where the order above is not guaranteed (a negative figure
// or overhead).
FastPeak worst_rank_peak(const FastMemoryModel& memory, const Parallelism& parallel,
                         const RankBytes* ranks, int groups);

// The largest allocated + reserved-only sum whose device bytes stay within `limit_bytes` (-1 when
// none does): a rank group whose sum passes it makes the layout miss the limit, whatever the
// other groups hold. The largest Wide where the order above is not guaranteed. `guess` (the
// answer for another layout, often the same) is checked first: two finishes instead of a
// bisection's forty.
Wide largest_fitting_sum(const FastMemoryModel& memory, const Parallelism& parallel,
                         int64_t limit_bytes, std::optional<Wide> guess = std::nullopt);

}  // namespace vramplan
