#include "validation/published_throughput.h"

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
  // GB200 racks are not a catalog GPU: skipped, saying so.
  const PublishedRow* gb200 = find_row(*report, "mb2509_llama38b_gb200_8_fp8");
  ASSERT_NE(gb200, nullptr);
  EXPECT_TRUE(gb200->skipped);
  EXPECT_NE(gb200->reason.find("not in the GPU catalog"), std::string::npos);
}

}  // namespace
}  // namespace vramplan
