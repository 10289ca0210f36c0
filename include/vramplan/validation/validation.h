// Checking estimates against measured runs (data/measurements, compiled in): Megatron-LM's
// functional tests (peak allocated and static memory on the last rank), the Ultra-Scale
// Playbook's nanotron sweep (reported memory, and which runs crashed), torchtitan's published
// tables (peak reserved) and the PyTorch reference (peak allocated measured with the frameworks'
// own code on fake tensors: per phase, per category, and the presets' parameter counts).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/training/uncertainty.h"

namespace vramplan {

struct ValidationRow {
  std::string dataset;  // "megatron" | "ultrascale" | "ultrascale-crashed" | "torchtitan" |
                        // "pytorch-reference" | "gpu-measured"
  std::string id;       // test case, or the run's layout
  std::string
      group;  // Megatron family (gpt, moe, ...), Ultra-Scale model (1B, 8B, ...), model family
  std::string quantity;     // "static allocated" | "peak allocated" | "reported" | "fit" | ...
  double measured_gib = 0;  // 0 for crashed runs
  double predicted_gib = 0;
  std::string verdict;  // on an H100 80GB (Ultra-Scale rows)
  bool skipped = false;
  std::string reason;  // why a row was skipped
  // What the error is relative to when not the measured value itself: the reference's
  // categories at the peak are errors in % of the measured peak (a category may be 0).
  double basis_gib = 0;
  // Further ways to group the row (the reference: family, method, layout, framework).
  std::map<std::string, std::string> facets{};
  double error_pct() const {
    return (predicted_gib - measured_gib) / (basis_gib > 0 ? basis_gib : measured_gib) * 100.0;
  }
};

// One parameter count of a preset, as the real model class has it (the reference's
// parameter_counts, instantiated on the meta device) and as vramplan counts it.
struct ParameterCountCheck {
  std::string preset;
  std::string part;  // "total", "embedding", "lm head", "other", "layer 0 self_attn", ...
  int64_t reference = 0;
  int64_t vramplan = 0;
  bool matches() const { return reference == vramplan; }
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

// A target from the issues (docs/accuracy.md). One not met yet is open: it carries the figure
// committed when it was opened, and the gate holds the value to that figure (no worse) until
// the target is met; the target itself is never moved to pass.
struct AccuracyTarget {
  std::string name;
  double value = 0;
  double target = 0;
  bool at_most = true;    // value must be <= target (else >=)
  double committed = -1;  // open targets: the figure the gate holds; < 0 = none (must be met)
  bool met() const { return at_most ? value <= target : value >= target; }
  bool open() const { return committed >= 0; }
  // Rounded to the 0.1 the figures are committed in.
  bool no_worse_than_committed() const {
    const double slack = 0.05;
    return at_most ? value <= committed + slack : value >= committed - slack;
  }
  // The gate: met, or open and no worse than its committed figure.
  bool passes() const { return met() || (open() && no_worse_than_committed()); }
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
  std::vector<ParameterCountCheck> parameter_counts;  // the reference's presets, part by part
};

// Runs every measured row through the estimator with one set of framework conventions per
// dataset (documented in docs/frameworks.md); rows that cannot be modelled are skipped, visibly.
Result<ValidationReport> validate_measurements();

// The uncertainty bands this report supports (see uncertainty.h): what data/uncertainty.json
// must hold.
UncertaintyBands derive_bands(const ValidationReport& report);

}  // namespace vramplan
