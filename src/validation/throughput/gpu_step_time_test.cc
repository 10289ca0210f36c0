#include "validation/throughput/gpu_step_time.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace vramplan {
namespace {

const PublishedRow& row(const PublishedReport& report, const std::string& id) {
  for (const PublishedRow& r : report.rows)
    if (r.id == id) return r;
  ADD_FAILURE() << "no row " << id;
  static const PublishedRow none;
  return none;
}

TEST(GpuStepTime, EveryMeasuredStepIsPredicted) {
  Result<PublishedReport> report = validate_gpu_step_time();
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_GE(report->rows.size(), 20u);
  for (const PublishedRow& r : report->rows) {
    EXPECT_FALSE(r.skipped) << r.id << ": " << r.reason;
    EXPECT_TRUE(std::isfinite(r.predicted_tok_s) && r.predicted_tok_s > 0) << r.id;
    EXPECT_GT(r.measured_tok_s, 0) << r.id;
    EXPECT_EQ(r.gpus, 1) << r.id;
    EXPECT_EQ(r.framework, "transformers") << r.id;
  }
  ASSERT_GE(report->summaries.size(), 3u);
  EXPECT_EQ(report->summaries[0].group, "all");
  EXPECT_EQ(report->summaries[0].rows, static_cast<int>(report->rows.size()));
  EXPECT_EQ(report->summaries[1].group, "gpu h100-80gb");
  EXPECT_EQ(report->summaries[2].group, "gpu h200-141gb");
}

// The columns are read as the run was set up: precision, recomputation and depth.
TEST(GpuStepTime, RowsAreReadAsTheyRan) {
  Result<PublishedReport> report = validate_gpu_step_time();
  ASSERT_TRUE(report.ok());
  const std::string base = "h200-141gb/Llama-3.2-1B/L16/s4096/b1/";
  const PublishedRow& bf16 = row(*report, base + "bf16/none");
  const PublishedRow& amp = row(*report, base + "amp-bf16/none");
  const PublishedRow& full = row(*report, base + "bf16/full");
  // fp32 weights, gradients and moments: the optimizer streams twice the bytes of pure bf16.
  EXPECT_NEAR(amp.predicted.optimizer_s / bf16.predicted.optimizer_s, 2.0, 0.5);
  EXPECT_EQ(bf16.predicted.recompute_s, 0);
  EXPECT_GT(full.predicted.recompute_s, 0);
  // Four of Llama 3.1 70B's 80 layers: an 80-layer model would not reach 5,000 tokens/s on one GPU.
  EXPECT_GT(row(*report, "h200-141gb/Llama-3.1-70B/L4/s4096/b1/bf16/none").predicted_tok_s, 5000);
}

}  // namespace
}  // namespace vramplan
