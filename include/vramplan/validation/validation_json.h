// The memory validation report as JSON, shared by `vramplan validate --format json` and the
// Python package's vramplan.validate().
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vramplan/validation/validation.h"

namespace vramplan {

// The datasets `--dataset` (Python: dataset=) accepts.
const std::vector<std::string>& validation_datasets();
// Whether a row or summary of `dataset` is shown when only `only` is asked for ("" = all;
// ultrascale brings its crashed runs along).
bool dataset_shown(const std::string& dataset, const std::string& only);
// Whether an accuracy target belongs to dataset `only` ("" = all).
bool target_shown(const AccuracyTarget& t, const std::string& only);
// {rows, summaries, fit_confusion, targets, parameter_counts (all or pytorch-reference),
// ultrascale_noise_floor} for `only` ("" = every dataset).
nlohmann::json validation_to_json(const ValidationReport& report, const std::string& only);

}  // namespace vramplan
