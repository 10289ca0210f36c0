#include "plan/worst_rank.h"

#include <algorithm>

namespace vramplan {
namespace {

// The worst as estimate() keeps it: each rank finished, more device bytes (or an overflow)
// replacing the worst so far, equal device bytes with more allocated too.
FastPeak worst_of_each(const FastMemoryModel& memory, const Parallelism& parallel,
                       const RankBytes* ranks, int groups) {
  FastPeak worst;
  for (int g = 0; g < groups && !worst.overflow; ++g) {
    const FastPeak rank = memory.finish(ranks[g].allocated, parallel, ranks[g].reserved_only);
    if (rank.overflow || rank.device_bytes > worst.device_bytes ||
        (rank.device_bytes == worst.device_bytes && rank.allocated_bytes > worst.allocated_bytes))
      worst = rank;
  }
  return worst;
}

}  // namespace

bool sums_order_peaks(const Overheads& o) {
  return o.allocator_fraction >= 0 && o.cuda_context_bytes >= 0 && o.nccl_bytes_per_group >= 0;
}

FastPeak worst_rank_peak(const FastMemoryModel& memory, const Parallelism& parallel,
                         const RankBytes* ranks, int groups) {
  const Overheads& o = memory.base().overheads;
  if (groups < 1 || !sums_order_peaks(o)) return worst_of_each(memory, parallel, ranks, groups);
  int worst = 0;
  Wide worst_sum = 0;
  for (int g = 0; g < groups; ++g) {
    const RankBytes& r = ranks[g];
    if (r.allocated < 0 || r.reserved_only < 0)
      return worst_of_each(memory, parallel, ranks, groups);
    const Wide sum = r.allocated + r.reserved_only;
    if (g == 0 || sum > worst_sum || (sum == worst_sum && r.allocated > ranks[worst].allocated)) {
      worst = g;
      worst_sum = sum;
    }
  }
  return memory.finish(ranks[worst].allocated, parallel, ranks[worst].reserved_only);
}

Wide largest_fitting_sum(const FastMemoryModel& memory, const Parallelism& parallel,
                         int64_t limit_bytes, std::optional<Wide> guess) {
  if (!sums_order_peaks(memory.base().overheads))
    return static_cast<Wide>(~static_cast<unsigned __int128>(0) >> 1);
  auto fits = [&](Wide sum) {
    if (sum < 0) return true;  // -1: below every sum
    const FastPeak peak = memory.finish(sum, parallel, 0);
    return !peak.overflow && peak.device_bytes <= limit_bytes;
  };
  if (guess && fits(*guess) && !fits(*guess + 1)) return *guess;
  // Device bytes are at least the sum (the pool and overheads are not negative): past the limit
  // nothing fits. Bisect between a sum known to fit (or -1) and one known not to.
  Wide fit = -1, miss = Wide{std::max<int64_t>(limit_bytes, -1)} + 1;
  while (miss - fit > 1) {
    const Wide mid = fit + (miss - fit) / 2;
    if (fits(mid))
      fit = mid;
    else
      miss = mid;
  }
  return fit;
}

}  // namespace vramplan
