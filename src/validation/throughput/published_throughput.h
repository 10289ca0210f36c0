// The step-time model against published throughput of named layouts (NVIDIA Megatron-Bridge and
// NeMo performance summaries, torchtitan's benchmark tables; data/measurements/
// published_throughput.csv with a source per row): each row's layout read by the same settings
// reader as the CLI, predicted on its catalog GPU, and compared on tokens/s per GPU.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/validation/validation.h"

namespace vramplan {

struct PublishedRow {
  std::string id;         // the dataset's id ("mb2509_llama370b_h100_64_fp8")
  std::string model;      // the vramplan preset ("" when there is none)
  std::string gpu;        // as published (h100-80gb, b200, gb200, ...)
  std::string framework;  // megatron-bridge, nemo, megatron-lm, torchtitan
  std::string precision;  // bf16 or the fp8 recipe as published
  std::string source;     // URL of the table
  int64_t gpus = 0;
  bool held_out = false;  // in the held-out families (published_held_out)
  double measured_tok_s = 0;
  double predicted_tok_s = 0;
  StepTime predicted;
  std::vector<std::string> notes;  // how the layout was read (pipeline split, fp8 recipe)
  bool skipped = false;
  std::string reason;
  double error_pct() const { return (predicted_tok_s - measured_tok_s) / measured_tok_s * 100; }
};

struct PublishedSummary {
  std::string group;  // "all", "held out", "kept for calibration", "framework megatron-bridge", ...
  int rows = 0;
  int skipped = 0;
  double median_abs_pct = 0;
  double p90_abs_pct = 0;
  double bias_pct = 0;  // median signed error: > 0 over-predicts
  double spearman = 0;  // rank correlation of predicted and measured tokens/s per GPU
};

struct PublishedReport {
  std::vector<PublishedRow> rows;
  std::vector<PublishedSummary> summaries;
  // The same layout measured in different releases, against its group's median
  // (published_release_floor.h): all rows with a preset, and the held-out families alone.
  NoiseFloor release_floor;
  NoiseFloor held_out_release_floor;
};

// Median and p90 |error|, bias and rank correlation of the rows in_group accepts (skipped rows
// counted apart).
PublishedSummary summarise_published(const std::vector<PublishedRow>& rows,
                                     const std::string& group,
                                     const std::function<bool(const PublishedRow&)>& in_group);

// The held-out part, named before any comparison was made and never used to set a constant:
// every Qwen3 and every Llama 2 row (one MoE family on three GPU generations, one dense family).
bool published_held_out(const std::string& preset);

Result<PublishedReport> validate_published_throughput(const StepTimeConstants& constants = {});

// The rows a Megatron calibration fits on: Megatron-Bridge and NeMo, not held out.
bool published_calibration_row(const PublishedRow& row);

struct PublishedCalibration {
  StepTimeConstants constants;
  int rows = 0;
  double start_objective = 0;  // mean Cauchy loss of ln(predicted / measured), before and after
  double objective = 0;
  int evaluations = 0;
};

// Fits StepTimeConstants to the calibration rows (published_calibration_row), as
// calibrate_step_time does on the Ultra-Scale sweep.
Result<PublishedCalibration> calibrate_published(const StepTimeConstants& start = {});

}  // namespace vramplan
