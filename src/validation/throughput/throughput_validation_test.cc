#include "validation/throughput/throughput_validation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "base/csv.h"
#include "base/embedded_data.h"
#include "validation/ultrascale.h"

namespace vramplan {
namespace {

TEST(Spearman, RanksNotValues) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 200, 3000, 40000}), 1);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  // Ties get their average rank: ranks (1.5, 1.5, 3) against (1, 2, 3).
  EXPECT_NEAR(spearman({5, 5, 7}, {1, 2, 3}), 0.8660254037844386, 1e-12);
  EXPECT_EQ(spearman({1}, {1}), 0);
}

// The sweep's mfu_pct / tok_s_gpu is nanotron's FLOPs per token over the H100's 989.4 TFLOP/s:
// nanotron_flops_per_token must reproduce it, per model to within 1% in the median (single 80B
// rows scatter by ±12%: their tok_s_gpu and mfu_pct disagree between repeated runs).
TEST(Throughput, NanotronFlopCountMatchesTheSweep) {
  std::string_view text;
  for (const EmbeddedFile& f : embedded_files())
    if (std::string_view(f.path) == "measurements/ultrascale_playbook_benchmarks.csv")
      text = f.text();
  Result<std::vector<CsvRow>> rows = parse_csv(text, "ultrascale");
  ASSERT_TRUE(rows.ok());
  std::map<std::string, std::vector<double>> ratios;
  for (const CsvRow& r : *rows) {
    const double mfu = std::strtod(r["mfu_pct"].c_str(), nullptr);
    const double tok = std::strtod(r["tok_s_gpu"].c_str(), nullptr);
    if (mfu < 10) continue;  // one decimal: too coarse below
    const double implied = mfu / 100 * 989.4e12 / tok;
    ratios[r["model"]].push_back(nanotron_flops_per_token(ultrascale_scenario(r)) / implied);
  }
  ASSERT_EQ(ratios.size(), 4u);
  for (auto& [model, values] : ratios) {
    std::sort(values.begin(), values.end());
    EXPECT_NEAR(values[values.size() / 2], 1, 0.01) << model;
  }
}

TEST(Throughput, EveryRunPredicted) {
  Result<ThroughputReport> report = validate_throughput();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->rows.size(), 1758u);
  for (const ThroughputRow& row : report->rows) {
    EXPECT_FALSE(row.skipped) << row.id << ": " << row.reason;
    EXPECT_GT(row.predicted_tok_s, 0) << row.id;
    EXPECT_TRUE(std::isfinite(row.predicted_tok_s)) << row.id;
  }
  ASSERT_EQ(report->summaries.size(), 5u);  // 1B, 3B, 8B, 80B, all
  EXPECT_EQ(report->summaries.back().model, "all");
  EXPECT_EQ(report->summaries.back().rows, 1758);
}

// The ratchet: the step-time model's accuracy on the sweep must not get worse than the targets
// (set a little looser than what the fitted constants reach; docs/accuracy.md).
TEST(Throughput, AccuracyDoesNotRegress) {
  Result<ThroughputReport> report = validate_throughput();
  ASSERT_TRUE(report.ok());
  for (const AccuracyTarget& t : report->targets)
    EXPECT_TRUE(t.passes()) << t.name << " = " << t.value << ", target "
                            << (t.at_most ? "<= " : ">= ") << t.target << ", committed "
                            << t.committed;
}

// Issue 23's ordering target is measured per (model, GPU count) group of the sweep: each group of
// three or more compared runs gets its own rank correlation, and the groups cover those runs.
TEST(Throughput, GroupRankingsCoverTheSweepsGroups) {
  Result<ThroughputReport> report = validate_throughput();
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->group_rankings.empty());
  int covered = 0;
  for (const GroupRanking& g : report->group_rankings) {
    EXPECT_GE(g.rows, 3) << g.model << " " << g.gpus;
    EXPECT_GE(g.spearman_tok, -1.0);
    EXPECT_LE(g.spearman_tok, 1.0);
    int in_group = 0;
    for (const ThroughputRow& r : report->rows)
      in_group += !r.skipped && r.model == g.model && r.gpus == g.gpus;
    EXPECT_EQ(in_group, g.rows) << g.model << " " << g.gpus;
    covered += g.rows;
  }
  EXPECT_GT(covered, 1700);  // of 1,758: only groups of fewer than 3 runs are left out
  // A ranking of the measured values themselves orders every group perfectly.
  std::vector<double> measured;
  for (const ThroughputRow& r : report->rows)
    if (r.model == "8B" && r.gpus == 64) measured.push_back(r.measured_tok_s);
  ASSERT_GE(measured.size(), 3u);
  EXPECT_DOUBLE_EQ(spearman(measured, measured), 1.0);
}

// The calibration improves its objective from a deliberately poor start, and its result lies
// inside every constant's range.
TEST(Throughput, CalibrationImprovesTheFit) {
  StepTimeConstants poor;
  poor.matmul_efficiency = 0.4;
  poor.cpu_overhead_s = 10e-6;
  Result<Calibration> fit = calibrate_step_time({"1B"}, poor);
  ASSERT_TRUE(fit.ok()) << fit.error().message();
  EXPECT_LT(fit->objective, fit->start_objective);
  EXPECT_GT(fit->rows, 500);
  EXPECT_LE(fit->constants.matmul_efficiency, 0.85);
  EXPECT_GE(fit->constants.matmul_efficiency, 0.30);
  EXPECT_FALSE(calibrate_step_time({"13B"}).ok());
}

}  // namespace
}  // namespace vramplan
