// The other modes of `vramplan validate` as JSON, and the gates of --check: shared by the CLI
// (cli/validate_command.cc, validate_throughput.cc, infer_command.cc) and the Python package's
// vramplan.validate(serving=, throughput=, planner=, bands=, check=).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "validation/throughput/throughput_validation.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/validation/serving_validation.h"
#include "vramplan/validation/validation.h"

namespace vramplan {

// `validate --serving --format json`: {rows[], summaries[]}.
nlohmann::json serving_validation_to_json(const ServingValidation& v);
// The step-time constants by name (`validate --calibrate`, and --throughput's "constants").
nlohmann::json step_time_constants_to_json(const StepTimeConstants& c);
// `validate --throughput --format json`: {constants, rows[], summaries[], targets[]}.
nlohmann::json published_report_to_json(const PublishedReport& report);
nlohmann::json throughput_report_to_json(const ThroughputReport& report);

// The memory validation's gate (`validate --check`) over the targets of dataset `only` ("" =
// all): failed = worse than the target and than its committed figure; open = not met but no
// worse than the committed figure (docs/accuracy.md).
struct MemoryGate {
  int failed = 0;
  int open = 0;
};
MemoryGate memory_gate(const ValidationReport& report, const std::string& only);
// --throughput --check: the targets not met.
int throughput_targets_missed(const ThroughputReport& report);

}  // namespace vramplan
