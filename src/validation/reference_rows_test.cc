// The PyTorch reference as `vramplan validate` compares it (reference_rows.cc,
// reference_params.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "vramplan/validation/validation.h"

namespace vramplan {
namespace {

const ValidationReport& report() {
  static const ValidationReport r = [] {
    Result<ValidationReport> result = validate_measurements();
    EXPECT_TRUE(result.ok());
    return result.ok() ? result.value() : ValidationReport{};
  }();
  return r;
}

std::vector<const ValidationRow*> reference_rows(const std::string& quantity) {
  std::vector<const ValidationRow*> rows;
  for (const ValidationRow& r : report().rows)
    if (r.dataset == "pytorch-reference" && r.quantity == quantity) rows.push_back(&r);
  return rows;
}

TEST(ReferenceRows, EveryRowIsComparedOrSkippedWithItsReason) {
  // 585 rows, 537 in target (data/measurements/README.md); every in-target row's settings are a
  // valid scenario, so all 537 are compared.
  const auto peak = reference_rows("peak allocated");
  ASSERT_EQ(peak.size(), 585u);
  int compared = 0;
  for (const ValidationRow* r : peak) {
    if (r->skipped) {
      EXPECT_EQ(r->reason.rfind("out of target: ", 0), 0u) << r->id << ": " << r->reason;
      continue;
    }
    ++compared;
    EXPECT_GT(r->measured_gib, 0) << r->id;
    EXPECT_GT(r->predicted_gib, 0) << r->id;
    EXPECT_FALSE(r->facets.at("family").empty()) << r->id;
    EXPECT_FALSE(r->facets.at("method").empty()) << r->id;
  }
  EXPECT_EQ(compared, 537);
}

TEST(ReferenceRows, CategoriesAddUpToThePeakOnBothSides) {
  // The reference's at_peak split sums to its peak; vramplan's categories are its tensor rows of
  // the phase the reference peaked in, so they sum to vramplan's total for that phase — its peak
  // where it peaks in the same phase (GEMM workspaces, which no tensor holds, left out of both).
  std::map<std::string, std::pair<double, double>> sums, peaks;
  std::map<std::string, double> phase_totals;
  int other_phase = 0;
  for (const ValidationRow& r : report().rows) {
    if (r.dataset != "pytorch-reference" || r.skipped) continue;
    const bool measured_at_step = r.facets.at("peak_phase") == "optimizer";
    if (r.quantity == "peak allocated") {
      peaks[r.id] = {r.measured_gib, r.predicted_gib};
      other_phase += measured_at_step != (r.facets.at("predicted_peak_phase") == "optimizer step");
    } else if (r.quantity ==
               (measured_at_step ? "optimizer step allocated" : "forward/backward allocated")) {
      phase_totals[r.id] = r.predicted_gib;
    } else if (r.quantity.find("at peak") != std::string::npos) {
      sums[r.id].first += r.measured_gib;
      sums[r.id].second += r.predicted_gib;
    }
  }
  ASSERT_EQ(sums.size(), 537u);
  EXPECT_GT(other_phase, 0);  // the case the phase's own rows are asked for is exercised
  for (const auto& [id, sum] : sums) {
    EXPECT_NEAR(sum.first, peaks[id].first, 1e-6) << id;
    EXPECT_NEAR(sum.second, phase_totals[id], 1e-6) << id;
    EXPECT_LE(sum.second, peaks[id].second + 1e-6) << id;
  }
}

TEST(ReferenceRows, CategoryErrorsAreShareOfThePeak) {
  for (const ValidationRow* r : reference_rows("gradients at peak")) {
    if (r->skipped) continue;
    // Gradients are often 0 at a backward peak (set to None after each step): the error is
    // measured against the peak, so it stays finite.
    EXPECT_GT(r->basis_gib, 0) << r->id;
    EXPECT_TRUE(std::isfinite(r->error_pct())) << r->id;
  }
}

TEST(ReferenceRows, SummariesCoverEveryQuantity) {
  int seen = 0;
  for (const DatasetSummary& s : report().summaries) {
    if (s.dataset != "pytorch-reference") continue;
    ++seen;
    EXPECT_EQ(s.rows, 537) << s.quantity;
    EXPECT_EQ(s.skipped, 48) << s.quantity;
  }
  EXPECT_EQ(seen, 7);
}

// Item 3 of issue 20: every preset's parameter count, in total and part by part, equals the real
// transformers class's (instantiated on the meta device by reference/).
TEST(ReferenceParameterCounts, EveryPartEqualsTheRealModelClass) {
  // every preset the pinned transformers builds (48); the rest are in the file's
  // parameter_counts_not_run with the reason
  ASSERT_GE(report().parameter_counts.size(), 48u * 8);
  std::map<std::string, int> presets;
  for (const ParameterCountCheck& c : report().parameter_counts) {
    ++presets[c.preset];
    EXPECT_EQ(c.vramplan, c.reference) << c.preset << " " << c.part;
  }
  EXPECT_EQ(presets.size(), 48u);
}

}  // namespace
}  // namespace vramplan
