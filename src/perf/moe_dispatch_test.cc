#include "perf/moe_dispatch.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

MoeConfig experts(int64_t n, int64_t k) {
  MoeConfig m;
  m.num_experts = n;
  m.top_k = k;
  return m;
}

// Eight H100s per node: 450 GB/s NVLink, 50 GB/s of network per GPU.
Network h100_nodes() { return Network(Cluster{8, 450, 50}, StepTimeConstants{}); }

TEST(MoeDispatch, ShareReachingASetIsOneMinusTheChanceAllPicksMissIt) {
  // One expert of E: a token reaches it with probability k/E.
  EXPECT_NEAR(share_of_tokens_reaching(128, 8, 1, 0, 0), 8.0 / 128, 1e-12);
  // Two experts of 8, two picks: 1 - (6/8)(5/7).
  EXPECT_NEAR(share_of_tokens_reaching(8, 2, 2, 0, 0), 1 - 6.0 / 8 * 5.0 / 7, 1e-12);
  EXPECT_EQ(share_of_tokens_reaching(8, 2, 8, 0, 0), 1);
  EXPECT_EQ(share_of_tokens_reaching(8, 0, 2, 0, 0), 0);
}

TEST(MoeDispatch, GroupLimitedRoutingReachesOnlyTheChosenGroups) {
  // DeepSeek-V3: 256 experts in 8 groups of 32, 4 groups chosen, 8 experts among their 128.
  // A node holding one group is reached when its group is chosen (1/2) and one of the 8 picks
  // lands in it: 1 - prod (96 - i)/(128 - i).
  double miss_group = 1, miss_rank = 1;
  for (int i = 0; i < 8; ++i) {
    miss_group *= (96.0 - i) / (128.0 - i);
    miss_rank *= (124.0 - i) / (128.0 - i);
  }
  EXPECT_NEAR(share_of_tokens_reaching(256, 8, 32, 8, 4), 0.5 * (1 - miss_group), 1e-9);
  // A rank's 4 experts inside one group.
  EXPECT_NEAR(share_of_tokens_reaching(256, 8, 4, 8, 4), 0.5 * (1 - miss_rank), 1e-9);
  // Fewer nodes reached than without the limit.
  EXPECT_LT(share_of_tokens_reaching(256, 8, 32, 8, 4), share_of_tokens_reaching(256, 8, 32, 0, 0));
}

TEST(MoeDispatch, AllToAllSendsOneCopyPerChosenExpert) {
  const DispatchCopies c = dispatch_copies(MoeDispatcher::kAllToAll, experts(128, 8), 16, 8);
  EXPECT_NEAR(c.on_node, 8.0 * 7 / 16, 1e-12);
  EXPECT_NEAR(c.off_node, 8.0 * 8 / 16, 1e-12);
  const DispatchCopies g = dispatch_copies(MoeDispatcher::kAllGather, experts(128, 8), 16, 8);
  EXPECT_EQ(g.on_node, 7);
  EXPECT_EQ(g.off_node, 8);
  EXPECT_EQ(dispatch_copies(MoeDispatcher::kDeepEp, experts(128, 8), 1, 8).off_node, 0);
}

TEST(MoeDispatch, DeepEpSendsOneCopyPerDestinationNode) {
  // Qwen3-30B-A3B on two nodes (ep 16): a token nearly always reaches the other node, once.
  const DispatchCopies c = dispatch_copies(MoeDispatcher::kDeepEp, experts(128, 8), 16, 8);
  EXPECT_NEAR(c.off_node, share_of_tokens_reaching(128, 8, 64, 0, 0), 1e-12);
  EXPECT_GT(c.off_node, 0.99);
  // With one expert per token nothing is duplicated: the same off-node traffic as all-to-all.
  const DispatchCopies one = dispatch_copies(MoeDispatcher::kHybridEp, experts(64, 1), 32, 8);
  EXPECT_NEAR(one.off_node,
              dispatch_copies(MoeDispatcher::kAllToAll, experts(64, 1), 32, 8).off_node, 1e-12);
}

TEST(MoeDispatch, DeduplicatingDispatchersAreFasterAcrossNodes) {
  const Network net = h100_nodes();
  MoeConfig v3 = experts(256, 8);
  const double tokens = 4096, bytes = 7168 * 2;
  const double a2a = dispatch_seconds(MoeDispatcher::kAllToAll, v3, tokens, bytes, 64, 1, net);
  const double deepep = dispatch_seconds(MoeDispatcher::kDeepEp, v3, tokens, bytes, 64, 1, net);
  const double gather = dispatch_seconds(MoeDispatcher::kAllGather, v3, tokens, bytes, 64, 1, net);
  EXPECT_LT(deepep, a2a);
  EXPECT_GT(gather, a2a);
  v3.router_groups = 8;
  v3.router_group_top_k = 4;
  EXPECT_LT(dispatch_seconds(MoeDispatcher::kDeepEp, v3, tokens, bytes, 64, 1, net), deepep);
  // The group limit does not change what all-to-all sends: one copy per chosen expert.
  EXPECT_EQ(dispatch_seconds(MoeDispatcher::kAllToAll, v3, tokens, bytes, 64, 1, net), a2a);
  EXPECT_EQ(dispatch_seconds(MoeDispatcher::kDeepEp, v3, tokens, bytes, 1, 1, net), 0);
}

}  // namespace
}  // namespace vramplan
