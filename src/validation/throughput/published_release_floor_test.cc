#include "validation/throughput/published_release_floor.h"

#include <gtest/gtest.h>

#include <string>

namespace vramplan {
namespace {

std::string row(const std::string& model, const std::string& version, double tok_s,
                int micro_batch = 1) {
  return model + ",h100-80gb,8,2,1,1,,,,4," + std::to_string(micro_batch) + ",128,4096,fp8,," +
         "megatron-bridge," + version + "," + std::to_string(tok_s) + "\n";
}

std::vector<CsvRow> table(const std::string& body) {
  const std::string header =
      "hf_model,gpu,gpus,tp,pp,cp,vp,ep,etp,dp,micro_batch,global_batch,seq_len,precision,"
      "recompute,framework,framework_version,tokens_per_s_per_gpu\n";
  Result<std::vector<CsvRow>> parsed = parse_csv(header + body, "test");
  EXPECT_TRUE(parsed.ok());
  return parsed.ok() ? *parsed : std::vector<CsvRow>{};
}

// Two releases of one layout, 100 and 300 tokens/s: the median is 200, so each is off by 100%
// and 33.3% of its own value. A layout measured once, and a different micro-batch, form no group.
TEST(PublishedReleaseFloor, ComparesEachReleaseWithItsLayoutsMedian) {
  const std::vector<CsvRow> rows =
      table(row("Llama-3.1-8B", "25.09", 100) + row("Llama-3.1-8B", "25.11", 300) +
            row("Llama-3.1-8B", "25.11", 500, 2) + row("Qwen3-30B-A3B", "25.09", 1000));
  const NoiseFloor f = published_release_floor(rows, false);
  EXPECT_EQ(f.groups, 1);
  EXPECT_EQ(f.rows, 2);
  EXPECT_NEAR(f.median_abs_pct, 100.0 / 3, 1e-9);  // nearest rank of {33.3, 100}
  EXPECT_NEAR(f.p90_abs_pct, 100.0, 1e-9);
}

// The held-out part counts Qwen3 and Llama 2 only; rows without a preset or tokens/s never count.
TEST(PublishedReleaseFloor, HeldOutCountsTheHeldOutFamiliesOnly) {
  const std::vector<CsvRow> rows =
      table(row("Llama-3.1-8B", "25.09", 100) + row("Llama-3.1-8B", "25.11", 300) +
            row("Qwen3-30B-A3B", "26.02", 500) + row("Qwen3-30B-A3B", "26.06", 500) +
            row("", "26.06", 500) + row("", "26.08", 900) + row("Qwen3-30B-A3B", "26.08", 0));
  const NoiseFloor held = published_release_floor(rows, true);
  EXPECT_EQ(held.groups, 1);
  EXPECT_EQ(held.rows, 2);
  EXPECT_DOUBLE_EQ(held.p90_abs_pct, 0);
  EXPECT_EQ(published_release_floor(rows, false).groups, 2);
}

}  // namespace
}  // namespace vramplan
