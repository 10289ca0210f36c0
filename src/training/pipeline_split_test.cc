#include "vramplan/training/pipeline_split.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

TEST(PipelineSplit, LighterEndsSplitFollowsLlama3) {
  // Llama 3 405B: 126 layers over 16 stages, one layer fewer on the first and last: 7 + 14·8 + 7.
  const std::optional<PipelineSplit> split = split_of(SplitKind::kLighterEnds, 126, 16, 1);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->first_stage_layers, 7);
  EXPECT_EQ(split->last_stage_layers, 7);
  // With virtual stages the ends hold a multiple of vpp and the middle of (pp−2)·vpp: none for
  // 126 layers on 16 × 2; 80 on 4 × 2 gives 18 + 22 + 22 + 18.
  EXPECT_FALSE(split_of(SplitKind::kLighterEnds, 126, 16, 2));
  const std::optional<PipelineSplit> virtual_split = split_of(SplitKind::kLighterEnds, 80, 4, 2);
  ASSERT_TRUE(virtual_split);
  EXPECT_EQ(virtual_split->first_stage_layers, 18);
  EXPECT_EQ(virtual_split->last_stage_layers, 18);
  EXPECT_FALSE(split_of(SplitKind::kEven, 126, 16, 1));
  EXPECT_TRUE(split_of(SplitKind::kEmbeddingAndLoss, 126, 16, 1));  // 128 = 16 · 8
}

TEST(PipelineSplit, SplitKindOfInvertsTheSplitFields) {
  for (SplitKind k :
       {SplitKind::kEven, SplitKind::kEmbeddingAndLoss, SplitKind::kEmbedding, SplitKind::kLoss,
        SplitKind::kBalanced, SplitKind::kBalancedEmbeddingAndLoss, SplitKind::kCompute}) {
    Parallelism p;
    set_split({k, 0, 0}, p);
    EXPECT_EQ(split_kind_of(p), k) << split_name(k);
  }
  Parallelism p;
  set_split({SplitKind::kLighterEnds, 3, 3}, p);
  EXPECT_EQ(split_kind_of(p), SplitKind::kLighterEnds);
  p = Parallelism{};
  p.balanced_split = p.loss_as_stage = true;
  EXPECT_FALSE(split_kind_of(p).has_value());
}

}  // namespace
}  // namespace vramplan
