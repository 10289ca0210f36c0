// Checking estimates against measured runs (data/measurements, compiled in): Megatron-LM's
// functional tests (peak allocated and static memory on the last rank) and the Ultra-Scale
// Playbook's nanotron sweep (reported memory, and which runs crashed).
#pragma once

#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/training/uncertainty.h"

namespace vramplan {

struct ValidationRow {
  std::string dataset;      // "megatron" | "ultrascale" | "ultrascale-crashed"
  std::string id;           // test case, or the run's layout
  std::string group;        // Megatron family (gpt, moe, ...) or Ultra-Scale model (1B, 8B, ...)
  std::string quantity;     // "static allocated" | "peak allocated" | "reported" | "fit"
  double measured_gib = 0;  // 0 for crashed runs
  double predicted_gib = 0;
  std::string verdict;  // on an H100 80GB (Ultra-Scale rows)
  bool skipped = false;
  std::string reason;  // why a row was skipped
  double error_pct() const { return (predicted_gib - measured_gib) / measured_gib * 100.0; }
};

struct DatasetSummary {
  std::string dataset;
  std::string quantity;
  int rows = 0;  // compared
  int skipped = 0;
  double median_abs_pct = 0;
  double p90_abs_pct = 0;
  double bias_pct = 0;  // median signed error: > 0 over-predicts
};

// Ultra-Scale runs that ran vs crashed, by the verdict predicted on an H100 80GB.
struct FitConfusion {
  int ran_fits = 0, ran_tight = 0, ran_oom = 0;
  int crashed_fits = 0, crashed_tight = 0, crashed_oom = 0;
};

struct AccuracyTarget {
  std::string name;
  double value = 0;
  double target = 0;
  bool at_most = true;  // value must be <= target (else >=)
  bool met() const { return at_most ? value <= target : value >= target; }
};

// How far the Ultra-Scale sweep disagrees with itself: runs whose per-GPU memory cannot depend
// on the differences between them (ZeRO-0, so not on dp; a full pipeline, so not on grad_accum)
// are grouped by (model, tp, pp, micro-batch), and each run is compared with its group's median.
// No predictor that sees only the layout can beat these figures on those runs.
struct NoiseFloor {
  int groups = 0;  // with at least two runs
  int rows = 0;
  double median_abs_pct = 0;
  double p90_abs_pct = 0;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<DatasetSummary> summaries;
  FitConfusion fit;
  std::vector<AccuracyTarget> targets;
  NoiseFloor ultrascale_noise;
};

// Runs every measured row through the estimator with one set of framework conventions per
// dataset (documented in docs/frameworks.md); rows that cannot be modelled are skipped, visibly.
Result<ValidationReport> validate_measurements();

// The uncertainty bands this report supports (see uncertainty.h): what data/uncertainty.json
// must hold.
UncertaintyBands derive_bands(const ValidationReport& report);

}  // namespace vramplan
