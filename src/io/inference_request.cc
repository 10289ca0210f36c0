#include "vramplan/io/inference_request.h"

#include <utility>

#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_settings.h"

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
  std::vector<std::string>& warnings = out.estimate.warnings;
  warnings.insert(warnings.begin(), out.resolved.warnings.begin(), out.resolved.warnings.end());
  return out;
}

}  // namespace vramplan
