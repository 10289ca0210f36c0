#include "vramplan/io/inference_request.h"

#include <utility>

#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_settings.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {

Result<SettingsInference> infer_settings(const nlohmann::json& settings,
                                         const FileReader& read_file,
                                         const ModelFetcher& fetch_model,
                                         const EstimateOptions& options) {
  Result<ResolvedInference> resolved = resolve_inference(settings, read_file, fetch_model);
  if (!resolved) return resolved.error();
  Result<InferenceEstimate> result = estimate_inference(resolved->scenario, options);
  if (!result)
    return resolved->imported ? name_as_imported(result.error(), *resolved->imported, settings)
                              : result.error();
  SettingsInference out{std::move(resolved).value(), std::move(result).value()};
  Result<std::vector<Fit>> fits =
      fit_rows(out.resolved.gpu, out.resolved.gpu_memory_gib, out.estimate.device_bytes);
  if (!fits) return fits.error();
  out.estimate.fit = std::move(fits).value();
  // The node's RAM against the offload's host rows (docs/offload.md), as training checks it.
  if (out.estimate.host_bytes > 0) {
    const InferenceScenario& s = out.resolved.scenario;
    for (Fit& f : out.estimate.fit) {
      const Gpu* gpu = builtin_gpus().find(f.gpu);
      const double ram = out.resolved.host_memory_gib.value_or(gpu ? gpu->host_memory_gib : 0.0);
      fit_host(f, out.estimate.host_bytes, s.world_size(), gpu ? gpu->gpus_per_node : 8, ram);
    }
  }
  std::vector<std::string>& warnings = out.estimate.warnings;
  warnings.insert(warnings.begin(), out.resolved.warnings.begin(), out.resolved.warnings.end());
  return out;
}

}  // namespace vramplan
