// The JSON every front end (CLI, server, Python) returns for a settings request, so that all of
// them answer the same request byte for byte.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_request.h"

namespace vramplan {

// estimate_to_json of the resolved scenario and its estimate.
nlohmann::json settings_estimate_to_json(const SettingsEstimate& result);
// Its top-level keys in the object's order, and one key's value built alone (null for another
// key): settings_estimate_part(r, k) == settings_estimate_to_json(r)[k] for each key.
std::vector<std::string> settings_estimate_keys(const SettingsEstimate& result);
nlohmann::json settings_estimate_part(const SettingsEstimate& result, std::string_view key);
// inference_to_json of the resolved serving scenario and its estimate.
nlohmann::json settings_inference_to_json(const SettingsInference& result);

}  // namespace vramplan
