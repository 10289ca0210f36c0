// The per-rank terms (perf/step_time_ranks.h): which pipeline ranks evaluate() visits.
#include "perf/step_time_ranks.h"

#include <gtest/gtest.h>

#include "model/test_models.h"

namespace vramplan {
namespace {

// The ranks visited: the first, the last, and the middle ranks whose layers differ.
TEST(StepTimeRanks, VisitsEachDistinctMiddleRankOnce) {
  Scenario s;
  s.model = testing::llama8b_shape();  // 32 layers
  s.training.seq_len = 1024;
  s.parallel.pp = 8;
  StepTimeData data;
  data.prefix.assign(33, {});
  for (int64_t i = 0; i < 32; ++i) {
    data.prefix[i + 1] = data.prefix[i];
    data.prefix[i + 1][0] += 1;
  }
  PipelineRanks ranks;
  visit_pipeline_ranks(data, s, LayoutTimes{}, ranks);
  EXPECT_EQ(ranks.ranks.size(), 3u);  // first, one middle (all equal), last
  s.parallel.pp = 5;
  s.parallel.balanced_split = true;  // 7, 7, 6, 6, 6 layers
  visit_pipeline_ranks(data, s, LayoutTimes{}, ranks);
  ASSERT_EQ(ranks.ranks.size(), 4u);  // first, 7-layer middle, 6-layer middle, last
  EXPECT_EQ(ranks.ranks[1].layer_count, 7);
  EXPECT_EQ(ranks.ranks[2].layer_count, 6);
}

}  // namespace
}  // namespace vramplan
