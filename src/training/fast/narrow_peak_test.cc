#include "training/fast/narrow_peak.h"

#include <gtest/gtest.h>

#include <random>

#include "model/test_models.h"

namespace vramplan {
namespace {

// Byte figures as the search meets them: mostly zero or GiB-sized, sometimes tiny, negative
// (differences of rows) or at the bound itself.
Wide random_bytes(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
    case 0:
    case 1:
      return 0;
    case 2:
      return std::uniform_int_distribution<int64_t>(0, 64)(rng);
    case 3:
      return -std::uniform_int_distribution<int64_t>(0, int64_t{1} << 34)(rng);
    case 4:
      return kNarrowBound - std::uniform_int_distribution<int64_t>(0, 2)(rng);
    default:
      return std::uniform_int_distribution<int64_t>(0, int64_t{1} << 40)(rng);
  }
}

// Every branch of rank_peak: lazy gradients or not, each schedule, one microbatch or many, a
// stage kept unsharded, FSDP's parts present or not.
TEST(NarrowPeak, EqualsRankPeakOnRandomInputs) {
  std::mt19937_64 rng(20250523);
  for (bool lazy : {false, true}) {
    Scenario base;
    base.model = testing::tiny_moe();
    base.conventions.lazy_gradients = lazy;
    Result<FastMemoryModel> memory = FastMemoryModel::prepare(base);
    ASSERT_TRUE(memory.ok());
    for (int i = 0; i < 200000; ++i) {
      RankStates r;
      r.states = random_bytes(rng);
      r.gradients = random_bytes(rng);
      r.unsharded_stage = std::bernoulli_distribution(0.3)(rng);
      r.unsharded = random_bytes(rng);
      r.chunk_by_chunk_saving = random_bytes(rng);
      r.unit_gradients = random_bytes(rng);
      r.prefetched = random_bytes(rng);
      r.unit_reduce_part = random_bytes(rng);
      r.unit_reduce_output = random_bytes(rng);
      r.resharded_first = random_bytes(rng);
      r.workspaces = random_bytes(rng);
      const Wide other = random_bytes(rng), reserved_only = random_bytes(rng);
      const Wide persistent = random_bytes(rng), freed_loss = random_bytes(rng);
      const Wide layer_freed = random_bytes(rng);
      const int64_t layers_held = std::uniform_int_distribution<int64_t>(0, 3)(rng);
      Parallelism par;
      par.pp = std::uniform_int_distribution<int64_t>(1, 4)(rng);
      par.vpp = std::uniform_int_distribution<int64_t>(1, 3)(rng);
      par.schedule = std::uniform_int_distribution<int>(0, 2)(rng) == 0 ? Schedule::kGPipe
                     : par.vpp > 1                                      ? Schedule::kInterleaved
                                                                        : Schedule::k1F1B;
      const int64_t microbatches = std::uniform_int_distribution<int64_t>(1, 9)(rng);

      bool forward_backward = true;
      Wide hidden = 0;
      const Wide allocated =
          memory->rank_peak(r, other, microbatches, par, &forward_backward, persistent, freed_loss,
                            &hidden, layer_freed, layers_held);
      const NarrowStates states = narrow_states(r);
      const NarrowOther others =
          narrow_other(other, reserved_only, persistent, freed_loss, layer_freed, layers_held);
      const PeakPhase phase = peak_phase(base.conventions, par, microbatches);
      ASSERT_TRUE(states.narrow && others.narrow && phase.narrow);
      const NarrowPeak narrow = narrow_rank_peak(states, others, phase);
      ASSERT_EQ(narrow.allocated, static_cast<int64_t>(allocated)) << i;
      ASSERT_EQ(narrow.reserved_only,
                static_cast<int64_t>(forward_backward ? reserved_only + hidden : 0))
          << i;
    }
  }
}

TEST(NarrowPeak, InputsBeyondTheBoundAreNotNarrow) {
  RankStates r;
  EXPECT_TRUE(narrow_states(r).narrow);
  r.prefetched = Wide{kNarrowBound} + 1;
  EXPECT_FALSE(narrow_states(r).narrow);
  r.prefetched = 0;
  r.states = -Wide{kNarrowBound} - 1;
  EXPECT_FALSE(narrow_states(r).narrow);
  EXPECT_TRUE(narrow_other(1, 2, 3, 4, 5, 6).narrow);
  EXPECT_FALSE(narrow_other(1, 2, Wide{1} << 70, 4, 5, 6).narrow);
  Parallelism par;
  EXPECT_TRUE(peak_phase(Conventions{}, par, 1).narrow);
  EXPECT_FALSE(peak_phase(Conventions{}, par, kNarrowBound + 1).narrow);
}

}  // namespace
}  // namespace vramplan
