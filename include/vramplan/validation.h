// Checking estimates against measured runs (data/measurements, compiled in): Megatron-LM's
// functional tests (peak allocated and static memory on the last rank) and the Ultra-Scale
// Playbook's nanotron sweep (reported memory, and which runs crashed).
#pragma once

#include <string>
#include <vector>

#include "vramplan/error.h"
#include "vramplan/uncertainty.h"

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

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<DatasetSummary> summaries;
  FitConfusion fit;
  std::vector<AccuracyTarget> targets;
};

// Runs every measured row through the estimator with one set of framework conventions per
// dataset (documented in docs/frameworks.md); rows that cannot be modelled are skipped, visibly.
Result<ValidationReport> validate_measurements();

// The uncertainty bands this report supports (see uncertainty.h): what data/uncertainty.json
// must hold.
UncertaintyBands derive_bands(const ValidationReport& report);

}  // namespace vramplan
