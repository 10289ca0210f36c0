// The JSON every front end (CLI, server, Python) returns for a settings request, so that all of
// them answer the same request byte for byte.
#pragma once

#include <nlohmann/json.hpp>

#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_request.h"

namespace vramplan {

// estimate_to_json of the resolved scenario and its estimate.
nlohmann::json settings_estimate_to_json(const SettingsEstimate& result);
// inference_to_json of the resolved serving scenario and its estimate.
nlohmann::json settings_inference_to_json(const SettingsInference& result);

}  // namespace vramplan
