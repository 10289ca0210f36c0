#include "validation/throughput/published_throughput.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace vramplan {
namespace {

const PublishedRow* find_row(const PublishedReport& report, const std::string& id) {
  for (const PublishedRow& r : report.rows)
    if (r.id == id) return &r;
  return nullptr;
}

TEST(PublishedThroughput, EveryRowIsComparedOrSaysWhyNot) {
  Result<PublishedReport> report = validate_published_throughput();
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_GE(report->rows.size(), 200u);
  int compared = 0;
  for (const PublishedRow& r : report->rows) {
    if (r.skipped) {
      EXPECT_FALSE(r.reason.empty()) << r.id;
      continue;
    }
    ++compared;
    EXPECT_TRUE(std::isfinite(r.predicted_tok_s) && r.predicted_tok_s > 0) << r.id;
    EXPECT_GT(r.measured_tok_s, 0) << r.id;
    EXPECT_FALSE(r.source.empty()) << r.id;
  }
  EXPECT_GE(compared, 50);
  ASSERT_FALSE(report->summaries.empty());
  EXPECT_EQ(report->summaries.front().group, "all");
  EXPECT_EQ(report->summaries.front().rows, compared);
}

TEST(PublishedThroughput, TheHeldOutFamiliesAreNamedByPreset) {
  EXPECT_TRUE(published_held_out("Qwen3-30B-A3B"));
  EXPECT_TRUE(published_held_out("Llama-2-7b"));
  EXPECT_FALSE(published_held_out("Llama-3.1-70B"));
  EXPECT_FALSE(published_held_out("Qwen2.5-7B"));
  Result<PublishedReport> report = validate_published_throughput();
  ASSERT_TRUE(report.ok());
  for (const PublishedRow& r : report->rows) EXPECT_EQ(r.held_out, published_held_out(r.model));
}

TEST(PublishedThroughput, LayoutsAreReadAsTheRecipesRanThem) {
  Result<PublishedReport> report = validate_published_throughput();
  ASSERT_TRUE(report.ok());
  // 126 layers over pp 8 × vp 8: Megatron-Bridge counts the embedding and the loss as layers.
  const PublishedRow* llama405 = find_row(*report, "mb2509_llama31405b_h100_1024_fp8");
  ASSERT_NE(llama405, nullptr);
  ASSERT_FALSE(llama405->skipped) << llama405->reason;
  ASSERT_FALSE(llama405->notes.empty());
  EXPECT_NE(llama405->notes.back().find("embedding and loss"), std::string::npos);
  // GB200 rows run on the catalog's NVL72 entry: the same Llama-3.1-8B recipe on 8 GPUs is
  // predicted faster than on B200 (2.5 against 2.25 PFLOP/s bf16), by no more than the peaks.
  const PublishedRow* gb200 = find_row(*report, "mb2509_llama38b_gb200_8_fp8");
  const PublishedRow* b200 = find_row(*report, "mb2509_llama38b_b200_8_fp8");
  ASSERT_NE(gb200, nullptr);
  ASSERT_NE(b200, nullptr);
  ASSERT_FALSE(gb200->skipped) << gb200->reason;
  ASSERT_FALSE(b200->skipped) << b200->reason;
  EXPECT_GT(gb200->predicted_tok_s, b200->predicted_tok_s);
  EXPECT_LE(gb200->predicted_tok_s, b200->predicted_tok_s * 2500 / 2250 * 1.001);
}

}  // namespace
}  // namespace vramplan
