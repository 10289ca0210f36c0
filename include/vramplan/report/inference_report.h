// Serving estimates for people and programs: stable JSON keys; table, markdown and CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/report/report.h"
#include "vramplan/serving/inference.h"

namespace vramplan {

// weights_bytes, kv_bytes_per_token, kv_bytes_per_sequence, kv_cache_bytes, activation_bytes,
// allocated/reserved/device_bytes, rows[] {component, bytes, counts_toward, formula, source},
// ranks[], max_kv_tokens and max_sequences (with a fraction; null otherwise), capacity {...},
// fit[], warnings[], parameters, scenario.
nlohmann::json inference_to_json(const InferenceScenario& s, const InferenceEstimate& e);
std::string render_inference_table(const InferenceScenario& s, const InferenceEstimate& e,
                                   const TableOptions& options = {});
std::string render_inference_markdown(const InferenceScenario& s, const InferenceEstimate& e);
std::string render_inference_csv(const InferenceEstimate& e);

}  // namespace vramplan
