// The worst rank found by its bytes before finish (plan/worst_rank.h) against finishing every
// rank group and keeping the worst, as estimate() picks its peak stage.
#include "plan/worst_rank.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "model/test_models.h"

namespace vramplan {
namespace {

FastPeak finish_each(const FastMemoryModel& memory, const Parallelism& par,
                     const std::vector<RankBytes>& ranks) {
  FastPeak worst;
  for (const RankBytes& r : ranks) {
    const FastPeak rank = memory.finish(r.allocated, par, r.reserved_only);
    if (rank.overflow) return rank;
    if (rank.device_bytes > worst.device_bytes ||
        (rank.device_bytes == worst.device_bytes && rank.allocated_bytes > worst.allocated_bytes))
      worst = rank;
  }
  return worst;
}

void expect_same(const FastPeak& a, const FastPeak& b) {
  EXPECT_EQ(a.overflow, b.overflow);
  if (a.overflow) return;
  EXPECT_EQ(a.allocated_bytes, b.allocated_bytes);
  EXPECT_EQ(a.reserved_bytes, b.reserved_bytes);
  EXPECT_EQ(a.device_bytes, b.device_bytes);
}

FastMemoryModel model_with(double allocator_fraction) {
  Scenario s;
  s.model = testing::tiny_moe();
  s.overheads.allocator_fraction = allocator_fraction;
  Result<FastMemoryModel> memory = FastMemoryModel::prepare(s);
  EXPECT_TRUE(memory.ok());
  return *memory;
}

// Random groups whose sums and allocated bytes often tie (few distinct values), near the
// rounding of the pool's fraction, and sometimes past the largest byte count.
TEST(WorstRank, FindsTheRankFinishingEachWouldKeep) {
  std::mt19937_64 rng(7);
  for (double fraction : {0.0, 0.1, 0.37, 1.0}) {
    const FastMemoryModel memory = model_with(fraction);
    Parallelism par;
    par.tp = 2;
    par.dp = 4;
    for (int trial = 0; trial < 4000; ++trial) {
      const int groups = std::uniform_int_distribution<int>(1, 6)(rng);
      const bool huge = trial % 50 == 0;
      std::vector<RankBytes> ranks(groups);
      for (RankBytes& r : ranks) {
        const int64_t base = huge ? (int64_t{1} << 62) - 4 : int64_t{40} << 30;
        r.allocated = base + std::uniform_int_distribution<int64_t>(0, 4)(rng) * 3;
        r.reserved_only = std::uniform_int_distribution<int64_t>(0, 3)(rng) * 2;
      }
      expect_same(worst_rank_peak(memory, par, ranks.data(), groups),
                  finish_each(memory, par, ranks));
    }
  }
}

// A negative figure breaks the order the shortcut relies on: every rank is finished then.
TEST(WorstRank, NegativeBytesFinishEachRank) {
  const FastMemoryModel memory = model_with(0.1);
  const Parallelism par;
  const std::vector<RankBytes> ranks = {{100, -50}, {80, 0}, {90, -1}};
  expect_same(worst_rank_peak(memory, par, ranks.data(), 3), finish_each(memory, par, ranks));
}

// The largest sum that fits is the boundary finish draws at the limit, with or without a guess
// (right, too low, too high).
TEST(WorstRank, LargestFittingSumIsTheBoundaryAtTheLimit) {
  for (double fraction : {0.0, 0.1, 0.37}) {
    const FastMemoryModel memory = model_with(fraction);
    Parallelism par;
    par.tp = 4;
    par.pp = 2;
    for (int64_t limit : {int64_t{1} << 20, int64_t{80} << 30, (int64_t{80} << 30) + 12345}) {
      const Wide sum = largest_fitting_sum(memory, par, limit);
      auto device = [&](Wide s) { return memory.finish(s, par, 0).device_bytes; };
      if (sum >= 0) {
        EXPECT_LE(device(sum), limit);
      }
      EXPECT_GT(device(sum + 1), limit);
      for (Wide guess : {sum, sum - 1, sum + 1, Wide{0}, Wide{-1}, Wide{limit}})
        EXPECT_TRUE(largest_fitting_sum(memory, par, limit, guess) == sum);
    }
  }
}

}  // namespace
}  // namespace vramplan
