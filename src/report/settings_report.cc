#include "vramplan/report/settings_report.h"

#include "vramplan/report/inference_report.h"
#include "vramplan/report/report.h"

namespace vramplan {

nlohmann::json settings_estimate_to_json(const SettingsEstimate& result) {
  return estimate_to_json(result.resolved.scenario, result.estimate);
}

nlohmann::json settings_inference_to_json(const SettingsInference& result) {
  return inference_to_json(result.resolved.scenario, result.estimate);
}

}  // namespace vramplan
