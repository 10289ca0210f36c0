// The step-time model against measured throughput: every Ultra-Scale Playbook benchmark run
// (nanotron on 1–64 nodes of 8 H100s; tok_s_gpu and mfu_pct) predicted and compared, per row
// and per model, and the fit of StepTimeConstants that produced the defaults.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "validation/throughput/published_throughput.h"
#include "vramplan/base/error.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/validation/validation.h"

namespace vramplan {

struct ThroughputRow {
  std::string id;     // "8B n2 dp4 tp2 pp2 zero1 mb1 ga64"
  std::string model;  // "1B", "3B", "8B", "80B"
  int64_t gpus = 0;
  double measured_tok_s = 0;  // tokens/s per GPU
  double predicted_tok_s = 0;
  double measured_mfu_pct = 0;   // as the sweep reports it (nanotron's FLOP count, see below)
  double predicted_mfu_pct = 0;  // the prediction in the same FLOP count
  StepTime predicted;            // vramplan's breakdown (its own MFU convention)
  bool skipped = false;
  std::string reason;
  double tok_error_pct() const { return (predicted_tok_s - measured_tok_s) / measured_tok_s * 100; }
  // REQUIRES: measured_mfu_pct > 0 (the sweep rounds a few very slow runs to 0.0)
  double mfu_error_pct() const {
    return (predicted_mfu_pct - measured_mfu_pct) / measured_mfu_pct * 100;
  }
};

struct ThroughputSummary {
  std::string model;    // a model, or "all"
  bool fitted = false;  // the constants were fitted on this model's rows
  int rows = 0;
  int skipped = 0;
  double median_abs_tok_pct = 0;
  double p90_abs_tok_pct = 0;
  double bias_tok_pct = 0;  // median signed error: > 0 over-predicts
  double median_abs_mfu_pct = 0;
  double spearman_tok = 0;  // rank correlation of predicted and measured tokens/s per GPU
  double spearman_mfu = 0;
};

// How well the model orders the layouts of one (model, GPU count) group of the sweep — the
// choices a user has for that model on that cluster (group_rankings.h).
struct GroupRanking {
  std::string model;
  int64_t gpus = 0;
  int rows = 0;
  double spearman_tok = 0;  // predicted against measured tokens/s per GPU, over the group
  // The sweep against itself: layouts it ran with ZeRO 0 and with ZeRO 1 (which adds one
  // parameter all-gather), the two measurements' rank correlation over the group's pairs; 0
  // pairs (and ρ 0) below 3 pairs.
  int twin_pairs = 0;
  double twin_spearman = 0;
};

// Issue 23's bar for ordering: ρ >= 0.9 within every group.
inline constexpr double kGroupRankingGoal = 0.9;

struct ThroughputReport {
  std::vector<ThroughputRow> rows;
  std::vector<ThroughputSummary> summaries;  // per model, then "all"
  std::vector<GroupRanking> group_rankings;  // per (model, GPU count), in the rows' order
  std::vector<AccuracyTarget> targets;
  StepTimeConstants constants;
  PublishedReport published;  // the same constants on published throughput (published_throughput.h)
  PublishedReport gpu_measured;  // and on steps measured on a GPU here (gpu_step_time.h)
};

// The models the default constants were fitted on; the others are held out.
const std::vector<std::string>& calibration_models();

// nanotron's FLOPs per token behind the sweep's mfu_pct: 6·N, with N the Hub parameter count
// plus a second copy of tied embeddings when pp > 1 (each end of the pipeline holds one), plus
// 12·L·s·h for attention (no causal halving). Checked against the sweep's own ratio of
// mfu_pct to tok_s_gpu in throughput_validation_test.
double nanotron_flops_per_token(const Scenario& s);

Result<ThroughputReport> validate_throughput(const StepTimeConstants& constants = {});

struct Calibration {
  StepTimeConstants constants;
  std::vector<std::string> models;  // fitted on
  int rows = 0;
  double start_objective = 0;  // mean Cauchy loss of ln(predicted / measured), before and after
  double objective = 0;
  int evaluations = 0;
};

// Fits StepTimeConstants to the named models' rows by Nelder–Mead on a robust (Cauchy) loss of
// the log error of tokens/s per GPU, starting from `start`, each constant kept in a plausible
// range.
Result<Calibration> calibrate_step_time(const std::vector<std::string>& models,
                                        const StepTimeConstants& start = {});

// Minimises `loss` over StepTimeConstants by Nelder–Mead with restarts, each fitted constant kept
// in its plausible range (throughput_validation.cc kFittedConstants); adds the loss evaluations
// made to *evaluations.
StepTimeConstants fit_step_time_constants(
    const std::function<double(const StepTimeConstants&)>& loss, const StepTimeConstants& start,
    int* evaluations);

// The robust loss of one prediction the fits minimise the mean of: ln(1 + (ln(p/m)/0.3)²).
double cauchy_log_loss(double predicted, double measured);

// Spearman's rank correlation (ties get their average rank); 0 with fewer than two values.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace vramplan
