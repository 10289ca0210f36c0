// The planner's offload pass (plan/planner_offload.h) and plans with offload settings given.
#include "plan/planner_offload.h"

#include <gtest/gtest.h>

#include "vramplan/io/plan_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/plan/planner.h"
#include "vramplan/training/estimate.h"

namespace vramplan {
namespace {

using nlohmann::json;

const FileReader kNoFiles;

// Llama-3.1-8B trained in full on one 40 GB A100: 16 B of states per parameter alone need
// 120 GiB, so nothing fits without offload.
json llama8b_on_a100_40gb(int64_t gpus) {
  return {{"model", "Llama-3.1-8B"}, {"gpus", gpus},      {"gpu", "a100-40gb"},
          {"seq_len", 4096},         {"global_batch", 8}, {"top", 3}};
}

Result<PlanResult> plan_of(const json& settings) { return plan_from_settings(settings, kNoFiles); }

TEST(PlannerOffload, NothingFitsOnTheGpuSoTheOffloadPassRuns) {
  Result<PlanResult> p = plan_of(llama8b_on_a100_40gb(1));
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_FALSE(p->candidates.empty());
  EXPECT_TRUE(p->offload_searched);
  EXPECT_NE(p->why.find("No layout fits with everything on the GPU"), std::string::npos);
  for (const PlanCandidate& c : p->candidates) {
    EXPECT_TRUE(c.layout.offload.any()) << layout_name(c.layout);
    EXPECT_LE(c.device_bytes, p->limit_bytes);
    EXPECT_GT(c.time.offload_s, 0);
    // The reported peak is estimate()'s for the same layout and offload.
    Result<ResolvedScenario> base = resolve_scenario(p->settings, kNoFiles);
    ASSERT_TRUE(base.ok()) << base.error().message();
    Scenario s = base->scenario;
    apply_layout(c.layout, s);
    Result<Estimate> e = estimate(s, {.explain = false});
    ASSERT_TRUE(e.ok()) << e.error().message();
    EXPECT_EQ(e->peak.device_bytes, c.device_bytes);
    EXPECT_EQ(e->peak.host_bytes, c.host_bytes);
    EXPECT_GT(c.host_bytes, 0);
  }
}

TEST(PlannerOffload, NeverMeansNoOffloadPass) {
  json settings = llama8b_on_a100_40gb(1);
  settings["offload_search"] = "never";
  Result<PlanResult> p = plan_of(settings);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_TRUE(p->candidates.empty());
  EXPECT_FALSE(p->offload_searched);
  EXPECT_TRUE(p->closest_miss.has_value());
}

TEST(PlannerOffload, NoOffloadPassWhenSomethingFits) {
  json settings = llama8b_on_a100_40gb(1);
  settings["gpu"] = "h200-141gb";
  settings["model"] = "Qwen2.5-3B";
  Result<PlanResult> p = plan_of(settings);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_FALSE(p->candidates.empty());
  EXPECT_FALSE(p->offload_searched);
  for (const PlanCandidate& c : p->candidates) EXPECT_FALSE(c.layout.offload.any());
}

// The node's RAM bounds the host rows: with 64 GiB per two GPUs only NVMe offload fits, and the
// note says why the CPU rungs did not.
TEST(PlannerOffload, TheNodesRamLeavesOnlyNvme) {
  json settings = llama8b_on_a100_40gb(2);
  settings["host_memory_gib"] = 64;
  Result<PlanResult> p = plan_of(settings);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_FALSE(p->candidates.empty());
  for (const PlanCandidate& c : p->candidates) {
    EXPECT_EQ(c.layout.offload.optimizer, OffloadTier::kNvme) << layout_name(c.layout);
    EXPECT_LE(c.host_bytes, int64_t{32} << 30);  // a rank's half of 64 GiB
  }
  EXPECT_GT(p->stats.host_over, 0);
  EXPECT_NE(p->offload_note.find("not the node's 64 GiB of RAM"), std::string::npos);
}

// Offload given by the user fixes it: every candidate runs it, on a sharding that supports it.
TEST(PlannerOffload, GivenOffloadIsKeptAndNeedsASharding) {
  json settings = {{"model", "Llama-3.1-8B"}, {"gpus", 2}, {"seq_len", 4096},
                   {"global_batch", 16},      {"top", 50}, {"offload_optimizer", "cpu"}};
  Result<PlanResult> p = plan_of(settings);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_FALSE(p->candidates.empty());
  EXPECT_FALSE(p->offload_searched);
  for (const PlanCandidate& c : p->candidates) {
    EXPECT_EQ(c.layout.offload.optimizer, OffloadTier::kCpu);
    const ShardingChoice& m = c.layout.sharding;
    EXPECT_TRUE(m.zero > 0 || m.distributed_optimizer) << layout_name(c.layout);
    EXPECT_NE(layout_name(c.layout).find("offload=optimizer:cpu"), std::string::npos);
  }
  settings["offload_params"] = "cpu";
  settings["zero"] = 2;  // parameters offload only with ZeRO-3 or sharded FSDP
  Result<PlanResult> refused = plan_of(settings);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "offload_params");
}

// Sixteen GPUs make HYBRID_SHARD a sharding choice: its offload check needs the branch's data
// ranks (a shard group of 8 over one data rank divided by zero before).
TEST(PlannerOffload, HybridShardingIsCheckedWithTheBranchsDegrees) {
  const json settings = {{"model", "Llama-3.1-8B"}, {"gpus", 16}, {"seq_len", 4096},
                         {"global_batch", 64},      {"top", 3},   {"offload_optimizer", "cpu"},
                         {"offload_params", "cpu"}, {"max_tp", 1}};
  Result<PlanResult> p = plan_of(settings);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_FALSE(p->candidates.empty());
  for (const PlanCandidate& c : p->candidates)
    EXPECT_TRUE(c.layout.sharding.zero == 3 || c.layout.sharding.fsdp == FsdpMode::kFullShard ||
                c.layout.sharding.fsdp == FsdpMode::kHybridShard)
        << layout_name(c.layout);
}

TEST(PlannerOffload, LayoutNamesSayTheOffload) {
  PlanLayout l;
  l.sharding.zero = 3;
  l.offload.optimizer = OffloadTier::kNvme;
  l.offload.params = OffloadTier::kNvme;
  l.offload.activations = true;
  EXPECT_EQ(layout_name(l),
            "tp1 pp1 cp1 dp1 mb1 recompute=none zero3 offload=optimizer:nvme,params:nvme,"
            "activations");
  l.offload = Offload{};
  l.offload.optimizer = OffloadTier::kCpu;
  l.offload.optimizer_fraction = 0.5;
  EXPECT_EQ(layout_name(l), "tp1 pp1 cp1 dp1 mb1 recompute=none zero3 offload=optimizer:cpu/0.5");
}

}  // namespace
}  // namespace vramplan
