// Settings in, estimate out: the one pipeline that `vramplan estimate` and the server's
// /api/estimate share (resolve the settings, estimate, fit on the GPU catalog, merge warnings),
// so that both return the same JSON byte for byte.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/training/estimate.h"

namespace vramplan {

struct SettingsEstimate {
  ResolvedScenario resolved;
  // fit[] holds the chosen GPU first (or the --gpu-memory-gib card), then the rest of the
  // catalog; warnings start with those from importing and resolving the settings.
  Estimate estimate;
};

// The fit table for a peak of device_bytes: the chosen GPU ("h100-80gb" when none was chosen,
// or a card of gpu_memory_gib), then every other catalog GPU.
Result<std::vector<Fit>> fit_rows(const ResolvedScenario& resolved, int64_t device_bytes);
// The same for a catalog id ("" = h100-80gb) or a card of gpu_memory_gib (serving uses it too).
Result<std::vector<Fit>> fit_rows(const std::string& gpu, std::optional<double> gpu_memory_gib,
                                  int64_t device_bytes);

// The host-memory check of every fit row (perf/hardware.h fit_host): the node of each catalog
// GPU (its gpus_per_node and host_memory_gib; 8 GPUs for a --gpu-memory-gib card), the RAM
// replaced by the settings' host_memory_gib.
void add_host_fit(const ResolvedScenario& resolved, Estimate& estimate);

// resolve_scenario -> estimate -> fit_rows -> add_host_fit. The settings may also hold
// estimate_output_options()' "formulas" (false: no formula strings, as options.explain = false).
// Errors name the setting at fault, as the user wrote it (a key of the imported file when it came
// from there). Pure and thread-safe (read_file aside).
Result<SettingsEstimate> estimate_settings(const nlohmann::json& settings,
                                           const FileReader& read_file,
                                           const ModelFetcher& fetch_model = nullptr,
                                           const EstimateOptions& options = {});

}  // namespace vramplan
