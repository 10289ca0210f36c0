// A training scenario and its parameter counts as JSON: the "scenario" and "parameters" objects
// of estimate_to_json, echoed so that a user can check what was understood.
#pragma once

#include <nlohmann/json.hpp>

#include "vramplan/model/params.h"
#include "vramplan/training/scenario.h"

namespace vramplan::report_json {

// `params`, when given, adds the trainable parameter count to the fine-tuning settings.
nlohmann::json scenario_json(const Scenario& s, const ParamCounts* params = nullptr);
nlohmann::json parameters_json(const ParamCounts& p);

}  // namespace vramplan::report_json
