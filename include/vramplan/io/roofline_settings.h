// Settings in, roofline and step time out: the one pipeline that `vramplan roofline` and the
// server's POST /api/roofline share (resolve the settings, pick the catalog GPU, the cluster from
// its catalog entry and the roofline_options() keys, the roofline, the step time), so that both
// return the same JSON byte for byte (report/roofline_report.h settings_roofline_to_json).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "vramplan/base/error.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/perf/roofline.h"
#include "vramplan/perf/step_time.h"

namespace vramplan {

struct SettingsRoofline {
  ResolvedScenario resolved;  // its warnings are the answer's warnings
  Gpu gpu;
  Cluster cluster;
  Roofline roofline;
  StepTime step;
};

// `settings`: the scenario keys (scenario_io.h) plus roofline_options(). The GPU is the catalog
// entry the settings name ("h100-80gb" when none); a gpu_memory_gib card is refused, having no
// speeds. `catalog` replaces the built-in catalog (`roofline --gpu-catalog`). Errors name the
// setting at fault as the user wrote it (a key of the imported file when it came from there).
// Pure and thread-safe (read_file and fetch_model aside).
Result<SettingsRoofline> roofline_settings(const nlohmann::json& settings,
                                           const FileReader& read_file,
                                           const ModelFetcher& fetch_model = nullptr,
                                           const GpuCatalog& catalog = builtin_gpus());

// The offload bandwidths of a cluster (host_link_gbps, host_memory_gbps, nvme_gbps) the settings
// give on top of the catalog's node: each a positive number of GB/s. `plan` and `roofline` share
// it.
std::optional<Error> read_offload_bandwidths(const nlohmann::json& settings, Cluster& cluster);

}  // namespace vramplan
