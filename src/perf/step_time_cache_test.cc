// A StepTimeCache (perf/step_time_cache.h) reused across recompute modes, schedules and
// shardings, as the planner's inner loops run them, gives every figure of a fresh evaluation bit
// for bit; evaluate_unless_slower skips only layouts below its floor.
#include "perf/step_time_cache.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "model/test_models.h"
#include "training/scenario_checks.h"
#include "vramplan/perf/step_time.h"

namespace vramplan {
namespace {

const Gpu& h100() { return *builtin_gpus().find("h100-80gb"); }

void expect_same(const StepTime& a, const StepTime& b) {
  EXPECT_EQ(a.compute_s, b.compute_s);
  EXPECT_EQ(a.recompute_s, b.recompute_s);
  EXPECT_EQ(a.tp_comm_s, b.tp_comm_s);
  EXPECT_EQ(a.cp_comm_s, b.cp_comm_s);
  EXPECT_EQ(a.ep_comm_s, b.ep_comm_s);
  EXPECT_EQ(a.cpu_bound_s, b.cpu_bound_s);
  EXPECT_EQ(a.pp_bubble_s, b.pp_bubble_s);
  EXPECT_EQ(a.dp_comm_exposed_s, b.dp_comm_exposed_s);
  EXPECT_EQ(a.optimizer_s, b.optimizer_s);
  EXPECT_EQ(a.offload_s, b.offload_s);
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.tokens_per_s_per_gpu, b.tokens_per_s_per_gpu);
  EXPECT_EQ(a.mfu, b.mfu);
}

struct Sharding {
  int64_t zero;
  FsdpMode fsdp;
  int64_t group;
  bool distributed_optimizer;
};

// An MoE model (a dense first layer) whose 4 layers split unevenly over 3 ranks, so that the
// ranks differ; every sharding kind, each schedule, each recompute mode, with and without
// optimizer offload (whose terms read the recompute mode).
TEST(StepTimeCache, ReusedInThePlannersLoopOrderGivesFreshFigures) {
  Scenario base;
  base.model = testing::tiny_moe();
  base.training.seq_len = 1024;
  const Cluster cluster = default_cluster(h100());
  Result<StepTimeModel> model = StepTimeModel::prepare(base, h100(), cluster);
  ASSERT_TRUE(model.ok()) << model.error().message();
  const std::vector<Sharding> shardings = {
      {0, FsdpMode::kNone, 0, false},        {1, FsdpMode::kNone, 0, false},
      {0, FsdpMode::kNone, 0, true},         {3, FsdpMode::kNone, 0, false},
      {0, FsdpMode::kShardGradOp, 0, false}, {0, FsdpMode::kHybridShard, 2, false}};
  StepTimeCache cache;
  int compared = 0, offloaded = 0, skipped = 0;
  for (bool offload : {false, true})
    for (int64_t pp : {1, 3})
      for (int64_t ep : {1, 2})
        for (int64_t mb : {1, 2})
          for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
            for (Schedule schedule : {Schedule::k1F1B, Schedule::kGPipe})
              for (const Sharding& sh : shardings) {
                Scenario s = base;
                s.parallel.pp = pp;
                s.parallel.balanced_split = true;
                s.parallel.dp = 4;
                s.parallel.ep = ep;
                s.parallel.schedule = schedule;
                s.parallel.zero = sh.zero;
                s.parallel.fsdp = sh.fsdp;
                s.parallel.fsdp_shard_group = sh.group;
                s.parallel.distributed_optimizer = sh.distributed_optimizer;
                s.training.micro_batch = mb;
                s.training.global_batch = 16;
                s.training.recompute = rc;
                if (offload) {
                  if (sh.zero == 0 && sh.fsdp == FsdpMode::kNone && !sh.distributed_optimizer)
                    continue;  // offload needs a sharding that runs it
                  s.offload.optimizer = OffloadTier::kCpu;
                }
                if (auto e = validate_scenario(s)) continue;
                const StepTime fresh = model->evaluate(s);
                expect_same(model->evaluate(s, cache), fresh);
                // Bounded by the slowest rank alone: skipped only when certainly slower.
                const double tokens = fresh.tokens_per_s_per_gpu;
                for (double floor : {tokens * 0.5, tokens, tokens * 1.02, tokens * 1.5}) {
                  const std::optional<StepTime> t = model->evaluate_unless_slower(s, cache, floor);
                  if (t)
                    expect_same(*t, fresh);
                  else
                    EXPECT_LT(tokens, floor);
                  skipped += !t;
                }
                ++compared;
                offloaded += offload;
              }
  EXPECT_GT(compared, 400);
  EXPECT_GT(offloaded, 100);
  EXPECT_GT(skipped, 100);  // the bound is tight enough to skip
}

}  // namespace
}  // namespace vramplan
