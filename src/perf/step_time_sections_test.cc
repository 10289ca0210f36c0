#include "perf/step_time_sections.h"

#include <gtest/gtest.h>

#include "model/test_models.h"
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

}  // namespace
}  // namespace vramplan
