#include "training/model_states.h"

#include <gtest/gtest.h>

#include "model/test_models.h"

namespace vramplan {
namespace {

Training with_optimizer(Optimizer o) {
  Training t;
  t.optimizer = o;
  return t;
}

TEST(OptimizerStates, BytesPerParameter) {
  // AdamW: m and v in fp32 = 8 B/param.
  EXPECT_EQ(optimizer_state_bytes(with_optimizer(Optimizer::kAdamW), 1000, 0, 0, 64, false).bytes,
            8000);
  // 8-bit Adam: 2 B/param + an fp32 absmax per 2048-value block per state: 2·4096 + 2·2·4 = 8208.
  EXPECT_EQ(
      optimizer_state_bytes(with_optimizer(Optimizer::kAdam8bit), 4096, 0, 0, 64, false).bytes,
      8208);
  EXPECT_EQ(optimizer_state_bytes(with_optimizer(Optimizer::kSgd), 1000, 0, 0, 64, false).bytes, 0);
  EXPECT_EQ(
      optimizer_state_bytes(with_optimizer(Optimizer::kSgdMomentum), 1000, 0, 0, 64, false).bytes,
      4000);
  EXPECT_EQ(optimizer_state_bytes(with_optimizer(Optimizer::kLion), 1000, 0, 0, 64, false).bytes,
            4000);
  // Muon: momentum (4 B) for the 900 matrix params, AdamW (8 B) for the 100 others = 4400.
  EXPECT_EQ(optimizer_state_bytes(with_optimizer(Optimizer::kMuon), 1000, 100, 0, 64, false).bytes,
            4400);
  // Adafactor: 2·(1000 − 100)/64 → ⌈28.1⌉ = 29 factored values + 100 vector values = 129 · 4 B.
  EXPECT_EQ(
      optimizer_state_bytes(with_optimizer(Optimizer::kAdafactor), 1000, 300, 100, 64, false).bytes,
      516);
  // The non-matrix parameters that are matrices all the same (the embedding, 300 here) are
  // factored too: only the 1-D vectors keep a whole second moment.
  EXPECT_EQ(
      optimizer_state_bytes(with_optimizer(Optimizer::kAdafactor), 1000, 300, 0, 64, false).bytes,
      4 * 32);
  // bf16 states halve AdamW.
  Training bf16 = with_optimizer(Optimizer::kAdamW);
  bf16.optimizer_state_dtype = DType::kBf16;
  EXPECT_EQ(optimizer_state_bytes(bf16, 1000, 0, 0, 64, false).bytes, 4000);
}

TEST(Sharding, StagesOfZero) {
  Parallelism p;
  p.dp = 8;
  EXPECT_EQ(sharding_of(p).dense_group, 1);  // plain data parallelism shards nothing
  p.zero = 1;
  Sharding one = sharding_of(p);
  EXPECT_TRUE(one.optimizer && !one.grads && !one.params);
  EXPECT_EQ(one.dense_group, 8);
  p.zero = 2;
  EXPECT_TRUE(sharding_of(p).grads);
  p.zero = 3;
  EXPECT_TRUE(sharding_of(p).params);
}

TEST(Sharding, DistributedOptimizerShardsOverDataAndContextRanks) {
  // Megatron shards over dp·cp, not dp alone (its theoretical formula's known slip).
  Parallelism p;
  p.dp = 4;
  p.cp = 2;
  p.distributed_optimizer = true;
  Sharding sh = sharding_of(p);
  EXPECT_TRUE(sh.optimizer && !sh.grads);
  EXPECT_EQ(sh.dense_group, 8);
}

TEST(Sharding, ExpertsShardOverTheExpertDataParallelGroup) {
  // edp = tp·cp·dp / (ep·etp) = 2·1·8 / (4·1) = 4.
  Parallelism p;
  p.tp = 2;
  p.dp = 8;
  p.ep = 4;
  p.distributed_optimizer = true;
  EXPECT_EQ(sharding_of(p).expert_group, 4);
}

TEST(Sharding, HybridShardShardsWithinItsGroup) {
  Parallelism p;
  p.dp = 16;
  p.fsdp = FsdpMode::kHybridShard;
  p.fsdp_shard_group = 8;
  Sharding sh = sharding_of(p);
  EXPECT_TRUE(sh.params);
  EXPECT_EQ(sh.dense_group, 8);
}

TEST(GpuParams, TensorParallelShardsMatricesNotNorms) {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.parallel.tp = 4;
  ParamCounts counts;
  LayerParams layer;
  layer.attention = 400;
  layer.mlp = 800;
  layer.norms = 10;
  counts.layers.assign(32, layer);
  counts.final_norm = 4096;
  RankLayout rank;
  rank.layers = {0, 1};
  // Two layers: (400 + 800)/4 + 10 = 310 each.
  EXPECT_EQ(gpu_params(s, counts, rank).dense, 620);
  rank.has_embedding = true;  // + ⌈128256/4⌉·4096 = 32064·4096 = 131,334,144
  EXPECT_EQ(gpu_params(s, counts, rank).dense, 620 + 131'334'144);
  EXPECT_EQ(gpu_params(s, counts, rank).largest_unit, 131'334'144);
}

}  // namespace
}  // namespace vramplan
