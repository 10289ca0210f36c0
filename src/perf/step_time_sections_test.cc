#include "perf/step_time_sections.h"

#include <gtest/gtest.h>

#include "model/test_models.h"
#include "perf/network.h"
#include "perf/roofline_ops.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {
namespace {

const Gpu& h100() { return *builtin_gpus().find("h100-80gb"); }

// A grouped GEMM pads each expert's rows to whole 128-row tiles: 64 rows cost as much as 128,
// 200 as much as 256; multiples of 128 are not padded.
TEST(StepTimeSections, GroupedGemmRowsPadToWholeTiles) {
  OpCost op;
  op.kind = OpKind::kGroupedMatmul;
  op.gemm_m = 64;
  EXPECT_DOUBLE_EQ(grouped_padding(op), 2);
  op.gemm_m = 200;
  EXPECT_DOUBLE_EQ(grouped_padding(op), 256.0 / 200);
  op.gemm_m = 1024;
  EXPECT_DOUBLE_EQ(grouped_padding(op), 1);
  op.gemm_m = 0;  // no shape recorded
  EXPECT_DOUBLE_EQ(grouped_padding(op), 1);
}

// Attention with fewer tiles (in units of the longest) than SMs takes the longest tile's time:
// 66 tiles on 132 SMs take twice the time of the work spread evenly; from 132 tiles on, none.
TEST(StepTimeSections, AttentionIsBoundByItsLongestTileWhenTilesAreFew) {
  StepTimeData data;
  data.sm_count = 132;
  OpCost op;
  op.kind = OpKind::kAttention;
  op.attention_tiles = 66;
  EXPECT_DOUBLE_EQ(tile_occupancy_bound(data, op), 2);
  op.attention_tiles = 132;
  EXPECT_DOUBLE_EQ(tile_occupancy_bound(data, op), 1);
  op.attention_tiles = 4096;
  EXPECT_DOUBLE_EQ(tile_occupancy_bound(data, op), 1);
  data.sm_count = 0;  // a custom GPU without an SM count: no bound
  op.attention_tiles = 1;
  EXPECT_DOUBLE_EQ(tile_occupancy_bound(data, op), 1);
}

// fp8 GEMMs are priced at 0.9 of the fp8 peak (1.8x bf16, as measured), bf16 at its peak.
TEST(StepTimeSections, Fp8GemmsRunBelowTheirPeak) {
  EXPECT_DOUBLE_EQ(matmul_peak_flops(h100(), DType::kBf16), h100().bf16_tflops * 1e12);
  EXPECT_DOUBLE_EQ(matmul_peak_flops(h100(), DType::kFp8), 0.9 * h100().fp8_tflops * 1e12);
}

// Launches of the operations whose shapes the router decides (dropless routing).
double dynamic_kernels(const Scenario& s, LayerKind kind) {
  OpList ops;
  layer_ops(s, op_dims(s), kind, ops);
  double kernels = 0;
  int dynamic = 0;
  for (int i = 0; i < ops.count; ++i) {
    if (!ops.ops[i].dynamic_shape) continue;
    kernels += ops.ops[i].kernels;
    ++dynamic;
  }
  // The permutation, the two grouped GEMMs and the activation between them.
  EXPECT_EQ(dynamic, kind.moe ? 4 : 0);
  return kernels;
}

StepTimeData h100_rates() {
  StepTimeData data;
  data.matmul_flops = data.attention_flops = h100().bf16_tflops * 1e12;
  data.vector_flops = h100().fp32_tflops * 1e12;
  data.hbm = h100().hbm_gbps * 1e9;
  data.sm_count = h100().sm_count;
  return data;
}

// Per-layer CUDA graphs replay a dense layer as one launch per pass (TP collectives included);
// its GPU time does not change.
TEST(StepTimeSections, CudaGraphsReplayADenseLayerAsOneLaunchPerPass) {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = 4096;
  s.parallel.tp = 4;
  const StepTimeData data = h100_rates();
  const Network net(default_cluster(h100()), data.c);
  const SectionTime eager = layer_time(data, s, op_dims(s), LayerKind{}, net);
  s.overheads.per_layer_cuda_graphs = true;
  const SectionTime graphed = layer_time(data, s, op_dims(s), LayerKind{}, net);
  EXPECT_GT(eager.launches_fwd, 8);
  EXPECT_DOUBLE_EQ(graphed.launches_fwd, 1);
  EXPECT_DOUBLE_EQ(graphed.launches_bwd, 1);
  EXPECT_DOUBLE_EQ(graphed.fwd, eager.fwd);
  EXPECT_DOUBLE_EQ(graphed.bwd, eager.bwd);
  EXPECT_DOUBLE_EQ(graphed.tp_fwd, eager.tp_fwd);
  EXPECT_DOUBLE_EQ(dynamic_kernels(s, LayerKind{}), 0);
}

// Under dropless routing the routed experts and their all-to-all stay eager between two graphs:
// forward, 2 graphs + the routed kernels + dispatch and combine; backward, the routed kernels
// twice (as eager backward counts them).
TEST(StepTimeSections, CudaGraphsLeaveTheDroplessExpertsEager) {
  Scenario s;
  s.model = testing::tiny_moe();
  s.training.seq_len = 4096;
  s.parallel.dp = 8;
  s.parallel.ep = 8;
  const LayerKind moe{true, false};
  const StepTimeData data = h100_rates();
  const Network net(default_cluster(h100()), data.c);
  const SectionTime eager = layer_time(data, s, op_dims(s), moe, net);
  s.overheads.per_layer_cuda_graphs = true;
  const SectionTime graphed = layer_time(data, s, op_dims(s), moe, net);
  const double routed = dynamic_kernels(s, moe);
  EXPECT_GT(routed, 0);
  EXPECT_DOUBLE_EQ(graphed.launches_fwd, 2 + routed + 2);
  EXPECT_DOUBLE_EQ(graphed.launches_bwd, 2 + 2 * routed + 2);
  EXPECT_LT(graphed.launches_fwd, eager.launches_fwd);
  EXPECT_DOUBLE_EQ(graphed.ep, eager.ep);
}

}  // namespace
}  // namespace vramplan
