#include "training/scenario_checks.h"

#include <gtest/gtest.h>

#include "model/test_models.h"

namespace vramplan {
namespace {

Scenario base() {
  Scenario s;
  s.model = testing::llama8b_shape();
  return s;
}

std::string field_of(const Scenario& s) {
  auto e = validate_scenario(s);
  return e ? e->field : "";
}

TEST(Validate, DefaultsAreValid) { EXPECT_EQ(field_of(base()), ""); }

TEST(Validate, OpLevelCheckpointingIsForDenseStandardAttentionLayers) {
  Scenario s = base();
  s.training.recompute = Recompute::kSelectiveOp;
  EXPECT_EQ(field_of(s), "");
  s.model = testing::tiny_moe();
  EXPECT_EQ(field_of(s), "recompute");
}

TEST(Validate, Fp8NeedsARecipeAndUnshardedParameters) {
  Scenario s = base();
  s.training.fp8_params = true;
  EXPECT_EQ(field_of(s), "fp8_params");  // fp8 weights without an fp8 recipe
  s.training.fp8 = Fp8Recipe::kTensorwise;
  EXPECT_EQ(field_of(s), "");
  s.parallel.dp = 8;
  s.parallel.zero = 3;
  EXPECT_EQ(field_of(s), "fp8");  // float8 all-gathers are not modelled
  s.parallel.zero = 1;
  EXPECT_EQ(field_of(s), "");
  s.training.recompute = Recompute::kSelectiveOp;
  EXPECT_EQ(field_of(s), "fp8");
}

TEST(Validate, TensorParallelMustDivideHeadsAndKvHeads) {
  Scenario s = base();
  s.parallel.tp = 3;  // 32 heads
  auto e = validate_scenario(s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "tp");
  EXPECT_EQ(e->value, "3");
  EXPECT_NE(e->accepted.find("divisor of 32"), std::string::npos);
  s.parallel.tp = 16;  // divides 32 heads, not 8 KV heads
  e = validate_scenario(s);
  ASSERT_TRUE(e);
  EXPECT_NE(e->reason.find("key/value heads"), std::string::npos);
}

TEST(Validate, SizesMustBePositiveAndBounded) {
  Scenario s = base();
  s.training.seq_len = 0;
  EXPECT_EQ(field_of(s), "seq_len");
  s = base();
  s.training.micro_batch = -1;
  EXPECT_EQ(field_of(s), "micro_batch");
  s = base();
  s.parallel.dp = 0;
  EXPECT_EQ(field_of(s), "dp");
  s = base();
  s.training.seq_len = int64_t{1} << 40;
  EXPECT_EQ(field_of(s), "seq_len");
  s = base();
  s.parallel.tp = s.parallel.pp = s.parallel.dp = s.parallel.cp = 1 << 20;  // 2^80 GPUs
  EXPECT_EQ(field_of(s), "dp");
}

TEST(Validate, ExpertsMustSplitOverEp) {
  Scenario s;
  s.model = testing::tiny_moe();  // 8 experts
  s.parallel.dp = 6;
  s.parallel.ep = 3;
  EXPECT_EQ(field_of(s), "ep");
  s.parallel.ep = 4;  // divides 8 experts but not tp·cp·dp = 6
  auto e = validate_scenario(s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "ep");
  EXPECT_NE(e->accepted.find("tp·cp·dp"), std::string::npos);
  s.parallel.ep = 2;
  EXPECT_EQ(field_of(s), "");
  Scenario dense = base();
  dense.parallel.ep = 2;
  EXPECT_EQ(field_of(dense), "ep");
}

TEST(Validate, ScheduleMatchesVirtualStages) {
  Scenario s = base();
  s.parallel.pp = 2;
  s.parallel.vpp = 2;  // 1F1B given with virtual stages
  EXPECT_EQ(field_of(s), "schedule");
  s.parallel.schedule = Schedule::kInterleaved;
  EXPECT_EQ(field_of(s), "");
  s.parallel.vpp = 1;
  EXPECT_EQ(field_of(s), "schedule");
}

TEST(Validate, BatchMustSplitIntoMicrobatches) {
  Scenario s = base();
  s.parallel.dp = 4;
  s.training.micro_batch = 2;
  s.training.global_batch = 12;  // not a multiple of 2·4
  EXPECT_EQ(field_of(s), "global_batch");
  s.training.global_batch = 64;
  EXPECT_EQ(field_of(s), "");
  EXPECT_EQ(microbatches_of(s), 8);
}

TEST(Validate, ContextParallelNeedsTwoChunksPerRank) {
  Scenario s = base();
  s.parallel.cp = 3;
  s.training.seq_len = 8190;  // 8190 % 6 == 0 → fine
  EXPECT_EQ(field_of(s), "");
  s.training.seq_len = 8192;  // 8192 % 6 != 0
  EXPECT_EQ(field_of(s), "cp");
}

TEST(Validate, ShardingOptionsDoNotMix) {
  Scenario s = base();
  s.parallel.zero = 1;
  s.parallel.fsdp = FsdpMode::kFullShard;
  EXPECT_EQ(field_of(s), "zero");
  s = base();
  s.parallel.zero = 4;
  EXPECT_EQ(field_of(s), "zero");
  s = base();
  s.parallel.distributed_optimizer = true;
  s.parallel.zero = 2;
  EXPECT_EQ(field_of(s), "distributed_optimizer");
}

TEST(Validate, OverheadsMustBeFinite) {
  Scenario s = base();
  s.overheads.allocator_fraction = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(field_of(s), "allocator_overhead");
}

}  // namespace
}  // namespace vramplan
