// Published serving figures (data/measurements/serving_published.csv, compiled in) against
// vramplan's serving estimates.
#pragma once

#include <string>
#include <vector>

#include "vramplan/base/error.h"

namespace vramplan {

// One logged figure of one run next to vramplan's prediction for it.
struct ServingCheck {
  std::string id;        // run id from the CSV
  std::string engine;    // "vllm" | "sglang"
  std::string version;   // engine version as logged
  std::string quantity;  // "weights", "activation peak", "non-torch", "KV cache", "KV tokens"
  std::string unit;      // "GiB" | "tokens"
  double published = 0;
  double predicted = 0;
  std::string source;  // URL of the log
  std::string note;
  // Signed error relative to the published magnitude; 0 when both are 0.
  double error_pct() const;
};

struct ServingSummary {
  std::string quantity;
  int rows = 0;
  double median_abs_pct = 0;
  double max_abs_pct = 0;
};

struct ServingValidation {
  std::vector<ServingCheck> rows;
  std::vector<ServingSummary> summaries;
};

// Predicts every published figure with the default conventions (the CSV supplies only each
// run's inputs: model, formats, tp, the GPU total logged, fraction and the engine's profile
// sizes), never per-row constants.
Result<ServingValidation> validate_serving();

}  // namespace vramplan
