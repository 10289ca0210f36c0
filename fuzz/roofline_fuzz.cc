// `vramplan roofline`'s pipeline (cli/roofline_command.cc) on fuzzed settings: the settings
// reader, the roofline of each operation, the step-time model and the JSON report. The settings
// are the fuzzer's bytes as a JSON object (what a --scenario file holds); inputs that are not an
// object are the API targets' business and are skipped. Invariants: the report's numbers are
// finite (check_bytes), FLOPs and bytes of every operation non-negative; rejections name a field.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "fuzz_checks.h"
#include "fuzz_targets.h"
#include "server/api.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/perf/roofline.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/report/roofline_report.h"

namespace vramplan::fuzz {

int fuzz_roofline(const uint8_t* data, size_t size) {
  using nlohmann::json;
  const json settings = json::parse(data, data + size, nullptr, false);
  if (settings.is_discarded() || !settings.is_object()) return -1;
  Result<ResolvedScenario> resolved = resolve_scenario(settings, server::refuse_files);
  if (!resolved) {
    check_error(resolved.error());
    return 0;
  }
  const std::string id = resolved->gpu.empty() ? "h100-80gb" : resolved->gpu;
  const Gpu* gpu = builtin_gpus().find(id);
  if (gpu == nullptr) return 0;
  Result<Roofline> roofline = compute_roofline(resolved->scenario, *gpu);
  if (!roofline) {
    check_error(roofline.error());
    return 0;
  }
  const Cluster cluster = default_cluster(*gpu);
  Result<StepTime> step = estimate_step_time(resolved->scenario, *gpu, cluster);
  if (!step) {
    check_error(step.error());
    return 0;
  }
  const json report = roofline_to_json(*roofline, *step, cluster);
  check_bytes(report);
  (void)json::parse(report.dump(-1, ' ', false, json::error_handler_t::strict));
  return 0;
}

}  // namespace vramplan::fuzz
