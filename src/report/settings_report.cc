#include "vramplan/report/settings_report.h"

#include <algorithm>

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

std::vector<std::string> settings_estimate_keys(const SettingsEstimate& result) {
  std::vector<std::string> keys = estimate_json_keys();
  if (result.resolved.imported) keys.push_back("imported");
  if (!result.resolved.vocabulary.empty()) keys.push_back("vocabulary");
  std::sort(keys.begin(), keys.end());
  return keys;
}

nlohmann::json settings_estimate_part(const SettingsEstimate& result, std::string_view key) {
  if (key == "imported")
    return result.resolved.imported ? imported_to_json(*result.resolved.imported)
                                    : nlohmann::json(nullptr);
  if (key == "vocabulary")
    return result.resolved.vocabulary.empty() ? nlohmann::json(nullptr)
                                              : vocabulary_to_json(result.resolved.vocabulary);
  return estimate_json_part(result.resolved.scenario, result.estimate, key);
}

nlohmann::json settings_inference_to_json(const SettingsInference& result) {
  nlohmann::json out = inference_to_json(result.resolved.scenario, result.estimate);
  if (result.resolved.imported) out["imported"] = imported_to_json(*result.resolved.imported);
  return out;
}

}  // namespace vramplan
