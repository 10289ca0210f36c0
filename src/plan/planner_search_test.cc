#include "plan/planner_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <string>

#include "model/test_models.h"
#include "plan/test_brute_force.h"
#include "plan/test_search.h"
#include "training/pipeline.h"
#include "training/scenario_checks.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace {

using namespace testing;

TEST(PlannerSearch, CountsEveryLayoutOfAHandCountedCase) {
  // 2 GPUs, tiny dense model (4 layers), seq 64, global batch 4. (tp, pp, cp, dp):
  //   (2,1,1,1): sp on/off = 2 · mb {1,2,4} · recompute 3                       = 18
  //   (1,2,1,1): vpp 1 (1f1b, gpipe) + vpp 2 (interleaved, gpipe) = 4 · 3 · 3     = 36
  //              (embedding+loss and balanced splits give the even split's [2,2]: not repeated)
  //   (1,1,2,1): 3 mb · 3 recompute · 7 shardings (ZeRO 0-3, distopt, FSDP full, grad-op) = 63
  //   (1,1,1,2): mb {1,2} · 3 · 7                                                 = 42
  // One data rank (the first two rows) has nothing to shard: only ZeRO 0.       total 159
  const PlanRequest r = request_for(tiny_dense(), 2, 64, 4);
  RecordingTimer timer;
  const SearchResult found = search(r, timer, kEverythingFits);
  EXPECT_EQ(found.stats.evaluated, 159);
  EXPECT_EQ(found.stats.memory_computed, 159);
  EXPECT_EQ(found.stats.fitting, 159);
  EXPECT_EQ(timer.seen().size(), 159u);

  PlanRequest fixed = r;  // zero 0 only, micro-batch 1, no recompute: 2 + 4 + 1 + 1
  fixed.space.zero = {0};
  fixed.space.fsdp = {FsdpMode::kNone};
  fixed.space.distributed_optimizer = {false};
  fixed.space.micro_batch = {1};
  fixed.space.recompute = {Recompute::kNone};
  EXPECT_EQ(search(fixed, timer, kEverythingFits).stats.evaluated, 8);
}

void expect_search_equals_brute_force(const PlanRequest& r, const Superset& sup) {
  int64_t rejected = 0;
  const std::map<std::string, PlanLayout> want = expected_layouts(r, sup, &rejected);
  RecordingTimer timer;
  const SearchResult found = search(r, timer, kEverythingFits);
  const std::set<std::string> got = timer.seen();
  EXPECT_EQ(found.stats.evaluated, static_cast<int64_t>(want.size()));
  EXPECT_GT(rejected, 0);  // the superset really holds invalid layouts to reject
  for (const auto& [key, layout] : want) EXPECT_TRUE(got.count(key)) << "not searched: " << key;
  Scenario s = r.base;
  for (const std::string& key : got) {
    EXPECT_TRUE(want.count(key)) << "searched but invalid or not conventional: " << key;
  }
  // Every layout the planner searched passes validate_scenario.
  for (const auto& [key, layout] : want) {
    apply_layout(layout, s);
    EXPECT_FALSE(validate_scenario(s).has_value()) << key;
  }
}

TEST(PlannerSearch, SearchesExactlyTheValidLayoutsOfADenseModel) {
  for (int64_t gpus : {4, 6}) {
    PlanRequest r = request_for(tiny_dense(), gpus, 96, 12);
    Superset sup;
    sup.micro_batches = {1, 2, 3, 4, 5, 6, 12};
    expect_search_equals_brute_force(r, sup);
  }
}

TEST(PlannerSearch, SearchesExactlyTheValidLayoutsWithEverySplitKind) {
  // torchtitan's and nanotron's splits beside the generic ones. 9 layers over 4 stages:
  // torchtitan's 2, 3, 3, 1 is no other kind's; nanotron's compute-cost split gives the stage
  // with the LM head fewer layers.
  ModelConfig m = tiny_dense();
  m.num_layers = 9;
  m.moe_layers.assign(9, false);
  m.layer_attention.assign(9, LayerAttention::kFull);
  PlanRequest r = request_for(m, 4, 96, 12);
  r.space.split.assign(std::begin(kAllSplits), std::end(kAllSplits));
  r.space.micro_batch = {1, 2};
  Superset sup;
  sup.micro_batches = {1, 2};
  expect_search_equals_brute_force(r, sup);
  int64_t rejected = 0;
  std::set<SplitKind> kinds;
  for (const auto& [key, layout] : expected_layouts(r, sup, &rejected))
    kinds.insert(layout.split.kind);
  EXPECT_TRUE(kinds.count(SplitKind::kBalancedEmbeddingAndLoss));
  EXPECT_TRUE(kinds.count(SplitKind::kCompute));
}

TEST(PlannerSearch, SearchesExactlyTheValidLayoutsOfAnMoeModel) {
  PlanRequest r = request_for(testing::tiny_moe(), 4, 64, 8);
  r.base.training.recompute_layers = 0;
  Superset sup;
  sup.eps = {1, 2, 3, 4, 8};
  sup.etps = {1, 2, 3, 4, 8};
  sup.micro_batches = {1, 2, 8};
  r.space.micro_batch = {1, 2, 8};  // keeps the superset small
  expect_search_equals_brute_force(r, sup);
}

}  // namespace
}  // namespace vramplan
