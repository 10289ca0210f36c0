#include "vramplan/io/roofline_settings.h"

#include <fmt/format.h>

#include <utility>

#include "vramplan/interop/import.h"
#include "vramplan/io/options.h"

namespace vramplan {
namespace {

constexpr int64_t kMaxGpusPerNode = 1024;
constexpr double kMaxGbps = 1e6;  // a petabyte per second per GPU is a typo

Result<Gpu> chosen_gpu(const ResolvedScenario& resolved, const GpuCatalog& catalog) {
  if (resolved.gpu_memory_gib)
    return Error{"gpu_memory_gib", fmt::format("{:g}", *resolved.gpu_memory_gib),
                 "a catalog GPU (gpu), whose speeds the roofline needs",
                 "a capacity alone has no peak FLOP/s or bandwidth"};
  const std::string id = resolved.gpu.empty() ? "h100-80gb" : resolved.gpu;
  const Gpu* gpu = catalog.find(id);
  if (gpu == nullptr) return Error{"gpu", id, catalog.ids(), "not in the GPU catalog"};
  return *gpu;
}

// The catalog's node for the GPU, with each roofline_options() key the settings give on top.
Result<Cluster> cluster_of(const nlohmann::json& settings, const Gpu& gpu) {
  Cluster cluster = default_cluster(gpu);
  int64_t per_node = cluster.gpus_per_node;
  if (auto e = read_integer_setting(settings, "gpus_per_node", per_node)) return *e;
  if (per_node < 1 || per_node > kMaxGpusPerNode)
    return Error{"gpus_per_node", std::to_string(per_node),
                 fmt::format("an integer from 1 to {}", kMaxGpusPerNode), ""};
  cluster.gpus_per_node = static_cast<int>(per_node);
  if (auto e = read_number_setting(settings, "intra_node_gbps", cluster.intra_node_gbps)) return *e;
  if (auto e = read_number_setting(settings, "inter_node_gbps", cluster.inter_node_gbps)) return *e;
  if (auto e = read_offload_bandwidths(settings, cluster)) return *e;
  const std::pair<const char*, double> bandwidths[] = {
      {"intra_node_gbps", cluster.intra_node_gbps}, {"inter_node_gbps", cluster.inter_node_gbps}};
  for (const auto& [key, gbps] : bandwidths) {
    if (gbps > 0 && gbps <= kMaxGbps) continue;  // also refuses NaN
    const bool given = settings.contains(key) && !settings.at(key).is_null();
    return Error{
        key, fmt::format("{:g}", gbps),
        fmt::format("a bandwidth in GB/s above 0, up to {:g}", kMaxGbps),
        given ? "" : fmt::format("not given, and the catalog entry of {} has none", gpu.id)};
  }
  return cluster;
}

}  // namespace

std::optional<Error> read_offload_bandwidths(const nlohmann::json& settings, Cluster& cluster) {
  const std::pair<const char*, double*> keys[] = {{"host_link_gbps", &cluster.host_link_gbps},
                                                  {"host_memory_gbps", &cluster.host_memory_gbps},
                                                  {"nvme_gbps", &cluster.nvme_gbps}};
  for (const auto& [key, field] : keys) {
    if (!settings.contains(key) || settings.at(key).is_null()) continue;
    if (auto e = read_number_setting(settings, key, *field)) return e;
    if (!(*field > 0 && *field <= kMaxGbps))  // also refuses NaN
      return Error{key, fmt::format("{:g}", *field),
                   fmt::format("a bandwidth in GB/s above 0, up to {:g}", kMaxGbps), ""};
  }
  return std::nullopt;
}

Result<SettingsRoofline> roofline_settings(const nlohmann::json& settings,
                                           const FileReader& read_file,
                                           const ModelFetcher& fetch_model,
                                           const GpuCatalog& catalog) {
  if (!settings.is_object())
    return Error{"settings", settings.dump().substr(0, 60), "a JSON object of settings", ""};
  nlohmann::json scenario_keys = settings;
  for (const OptionSpec& o : roofline_options()) scenario_keys.erase(o.key);
  Result<ResolvedScenario> resolved = resolve_scenario(scenario_keys, read_file, fetch_model);
  if (!resolved) {
    Error e = resolved.error();
    // The cluster keys are accepted too, though the scenario's reader never sees them.
    if (e.reason == "unknown setting")
      for (const OptionSpec& o : roofline_options()) e.accepted += std::string(", ") + o.key;
    return e;
  }
  auto named = [&](Error e) {
    return resolved->imported ? name_as_imported(std::move(e), *resolved->imported, settings) : e;
  };
  Result<Gpu> gpu = chosen_gpu(*resolved, catalog);
  if (!gpu) return gpu.error();
  const Scenario& scenario = resolved->scenario;
  Result<Roofline> roofline = compute_roofline(scenario, *gpu);
  if (!roofline) return named(roofline.error());
  Result<Cluster> cluster = cluster_of(settings, *gpu);
  if (!cluster) return cluster.error();
  Result<StepTime> step = estimate_step_time(scenario, *gpu, *cluster);
  if (!step) return named(step.error());
  return SettingsRoofline{std::move(resolved).value(), std::move(gpu).value(),
                          std::move(cluster).value(), std::move(roofline).value(),
                          std::move(step).value()};
}

}  // namespace vramplan
