// Settings in, serving estimate out: the one pipeline that `vramplan infer` and the server's
// /api/infer share (resolve the settings, estimate, fit on the GPU catalog, merge warnings), so
// that both return the same JSON byte for byte.
#pragma once

#include <nlohmann/json.hpp>

#include "vramplan/base/error.h"
#include "vramplan/io/inference_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/serving/inference.h"

namespace vramplan {

struct SettingsInference {
  ResolvedInference resolved;
  // fit[] holds the chosen GPU first (or the --gpu-memory-gib card), then the rest of the
  // catalog; warnings start with those from resolving the settings.
  InferenceEstimate estimate;
};

// resolve_inference -> estimate_inference -> fit_rows. Errors name the setting at fault. Pure and
// thread-safe (read_file and fetch_model aside).
Result<SettingsInference> infer_settings(const nlohmann::json& settings,
                                         const FileReader& read_file,
                                         const ModelFetcher& fetch_model = nullptr,
                                         const EstimateOptions& options = {});

}  // namespace vramplan
