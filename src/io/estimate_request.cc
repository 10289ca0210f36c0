#include "vramplan/io/estimate_request.h"

#include <optional>
#include <utility>

#include "io/setting_reader.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {

Result<std::vector<Fit>> fit_rows(const ResolvedScenario& resolved, int64_t device_bytes) {
  return fit_rows(resolved.gpu, resolved.gpu_memory_gib, device_bytes);
}

Result<std::vector<Fit>> fit_rows(const std::string& gpu_id, std::optional<double> gpu_memory_gib,
                                  int64_t device_bytes) {
  const GpuCatalog& catalog = builtin_gpus();
  std::vector<Fit> rows;
  if (gpu_memory_gib) rows.push_back(fit_on(custom_gpu(*gpu_memory_gib), device_bytes));
  const std::string chosen = gpu_id.empty() ? "h100-80gb" : gpu_id;
  const Gpu* gpu = catalog.find(chosen);
  if (gpu == nullptr) return Error{"gpu", chosen, catalog.ids(), "not in the GPU catalog"};
  if (!gpu_memory_gib) rows.push_back(fit_on(*gpu, device_bytes));
  for (const Fit& f : fit_table(catalog, device_bytes))
    if (f.gpu != rows.front().gpu) rows.push_back(f);
  return rows;
}

void add_host_fit(const ResolvedScenario& resolved, Estimate& estimate) {
  const GpuCatalog& catalog = builtin_gpus();
  for (Fit& f : estimate.fit) {
    const Gpu* gpu = catalog.find(f.gpu);
    const int64_t per_node = gpu ? gpu->gpus_per_node : 8;
    const double ram = resolved.host_memory_gib.value_or(gpu ? gpu->host_memory_gib : 0.0);
    fit_host(f, estimate.peak.host_bytes, estimate.world_size, per_node, ram);
  }
}

Result<SettingsEstimate> estimate_settings(const nlohmann::json& settings,
                                           const FileReader& read_file,
                                           const ModelFetcher& fetch_model,
                                           const EstimateOptions& options) {
  // "formulas" (estimate_output_options()) is no scenario key: taken out before resolving.
  const bool has_output_keys = settings.is_object() && settings.contains("formulas");
  nlohmann::json scenario_settings;
  if (has_output_keys) {
    scenario_settings = settings;
    scenario_settings.erase("formulas");
  }
  const nlohmann::json& scenario = has_output_keys ? scenario_settings : settings;
  EstimateOptions chosen = options;
  if (has_output_keys) {
    bool formulas = true;
    if (std::optional<Error> e = SettingReader(settings).boolean("formulas", formulas)) return *e;
    chosen.explain = chosen.explain && formulas;
  }
  Result<ResolvedScenario> resolved = resolve_scenario(scenario, read_file, fetch_model);
  if (!resolved) return resolved.error();
  Result<Estimate> result = estimate(resolved->scenario, chosen);
  if (!result)
    return resolved->imported ? name_as_imported(result.error(), *resolved->imported, scenario)
                              : result.error();
  SettingsEstimate out{std::move(resolved).value(), std::move(result).value()};
  Result<std::vector<Fit>> fits = fit_rows(out.resolved, out.estimate.peak.device_bytes);
  if (!fits) return fits.error();
  out.estimate.fit = std::move(fits).value();
  add_host_fit(out.resolved, out.estimate);
  std::vector<std::string>& warnings = out.estimate.warnings;
  warnings.insert(warnings.begin(), out.resolved.warnings.begin(), out.resolved.warnings.end());
  return out;
}

}  // namespace vramplan
