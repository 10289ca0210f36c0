#include "vramplan/report/settings_report.h"

#include "vramplan/report/inference_report.h"
#include "vramplan/report/report.h"

namespace vramplan {

nlohmann::json settings_estimate_to_json(const SettingsEstimate& result) {
  nlohmann::json out = estimate_to_json(result.resolved.scenario, result.estimate);
  if (result.resolved.imported) out["imported"] = imported_to_json(*result.resolved.imported);
  if (!result.resolved.vocabulary.empty())
    out["vocabulary"] = vocabulary_to_json(result.resolved.vocabulary);
  return out;
}

nlohmann::json settings_inference_to_json(const SettingsInference& result) {
  nlohmann::json out = inference_to_json(result.resolved.scenario, result.estimate);
  if (result.resolved.imported) out["imported"] = imported_to_json(*result.resolved.imported);
  return out;
}

}  // namespace vramplan
