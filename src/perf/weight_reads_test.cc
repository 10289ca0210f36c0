#include "perf/weight_reads.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

// Llama-3.1-8B's 14.99 GiB on an H100 with 4 GiB offloaded: 11 GiB from 3.35 TB/s HBM at 92%,
// 4 GiB over PCIe 5.0 x16 (64 GB/s) at 80% — the offloaded third costs eight times the rest.
TEST(WeightReads, OffloadedWeightsCrossTheHostLink) {
  const Gpu& h100 = *builtin_gpus().find("h100-80gb");
  const int64_t gib = int64_t{1} << 30;
  const WeightReads r = decode_weight_reads(11 * gib, 4 * gib, h100);
  EXPECT_NEAR(r.hbm_s, 11.0 * gib / (3350e9 * 0.92), 1e-12);
  EXPECT_NEAR(r.host_link_s, 4.0 * gib / (64e9 * 0.8), 1e-12);
  EXPECT_GT(r.host_link_s, 8 * r.hbm_s);
  Gpu unknown = h100;
  unknown.host_link_gbps = 0;
  EXPECT_EQ(decode_weight_reads(11 * gib, 4 * gib, unknown).host_link_s, 0);
}

}  // namespace
}  // namespace vramplan
