// `vramplan roofline`: per-operation FLOPs, bytes, arithmetic intensity and bound of one
// microbatch on one GPU after sharding, and the step time, tokens/s per GPU and MFU they lead to.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/perf/roofline.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/report/roofline_report.h"

namespace vramplan::cli {
namespace {

constexpr int kMaxGpusPerNode = 1024;
constexpr double kMaxGbps = 1e6;  // a petabyte per second per GPU is a typo

struct RooflineArgs : SettingsFlags {
  std::string catalog_file;
  std::string format = "table";
  CLI::Option* gpus_per_node = nullptr;
  CLI::Option* intra_node = nullptr;
  CLI::Option* inter_node = nullptr;
  int gpus_per_node_value = 0;
  double intra_node_gbps = 0;
  double inter_node_gbps = 0;
};

Result<GpuCatalog> load_catalog(const std::string& path) {
  if (path.empty()) return builtin_gpus();
  Result<std::string> text = read_text_file(path, "--gpu-catalog");
  if (!text) return text.error();
  Result<GpuCatalog> catalog = parse_gpu_catalog(*text);
  if (!catalog) {
    Error e = catalog.error();
    e.field = "--gpu-catalog " + path + ": " + e.field;
    return e;
  }
  return catalog;
}

Result<Gpu> chosen_gpu(const ResolvedScenario& resolved, const GpuCatalog& catalog) {
  if (resolved.gpu_memory_gib)
    return Error{"gpu_memory_gib", fmt::format("{:g}", *resolved.gpu_memory_gib),
                 "a catalog GPU (--gpu), whose speeds the roofline needs",
                 "a capacity alone has no peak FLOP/s or bandwidth"};
  const std::string id = resolved.gpu.empty() ? "h100-80gb" : resolved.gpu;
  const Gpu* gpu = catalog.find(id);
  if (gpu == nullptr) return Error{"gpu", id, catalog.ids(), "not in the GPU catalog"};
  return *gpu;
}

Result<Cluster> cluster_of(const RooflineArgs& args, const Gpu& gpu) {
  Cluster cluster = default_cluster(gpu);
  if (args.gpus_per_node->count() > 0) cluster.gpus_per_node = args.gpus_per_node_value;
  if (args.intra_node->count() > 0) cluster.intra_node_gbps = args.intra_node_gbps;
  if (args.inter_node->count() > 0) cluster.inter_node_gbps = args.inter_node_gbps;
  const std::string missing =
      fmt::format("not given, and the catalog entry of {} has none", gpu.id);
  if (args.gpus_per_node->count() > 0 &&
      (args.gpus_per_node_value < 1 || args.gpus_per_node_value > kMaxGpusPerNode))
    return Error{"--gpus-per-node", std::to_string(args.gpus_per_node_value),
                 fmt::format("an integer from 1 to {}", kMaxGpusPerNode), ""};
  const std::pair<const char*, double> bandwidths[] = {
      {"--intra-node-gbps", cluster.intra_node_gbps},
      {"--inter-node-gbps", cluster.inter_node_gbps}};
  for (const auto& [flag, gbps] : bandwidths) {
    if (gbps > 0 && gbps <= kMaxGbps) continue;
    const bool given = std::string(flag) == "--intra-node-gbps" ? args.intra_node->count() > 0
                                                                : args.inter_node->count() > 0;
    return Error{flag, fmt::format("{:g}", gbps),
                 fmt::format("a bandwidth in GB/s above 0, up to {:g}", kMaxGbps),
                 given ? "" : missing};
  }
  return cluster;
}

int run_roofline(const RooflineArgs& args) {
  Result<nlohmann::json> settings = collect_settings(args);
  if (!settings) return report_error(settings.error());
  const FileReader reader = [](const std::string& path) { return read_text_file(path, "model"); };
  Result<ResolvedScenario> resolved = resolve_scenario(*settings, reader);
  if (!resolved) return report_error(resolved.error());
  Result<GpuCatalog> catalog = load_catalog(args.catalog_file);
  if (!catalog) return report_error(catalog.error());
  Result<Gpu> gpu = chosen_gpu(*resolved, *catalog);
  if (!gpu) return report_error(gpu.error());
  const Scenario& scenario = resolved->scenario;
  Result<Roofline> roofline = compute_roofline(scenario, *gpu);
  if (!roofline) return report_error(roofline.error());
  Result<Cluster> cluster = cluster_of(args, *gpu);
  if (!cluster) return report_error(cluster.error());
  Result<StepTime> step = estimate_step_time(scenario, *gpu, *cluster);
  if (!step) return report_error(step.error());
  for (const std::string& warning : resolved->warnings)
    std::cerr << "vramplan: note: " << warning << "\n";
  if (args.format == "json") {
    std::cout << roofline_to_json(*roofline, *step, *cluster).dump(2) << "\n";
  } else if (args.format == "csv") {
    std::cout << render_roofline_csv(*roofline);
  } else {
    std::cout << render_roofline_table(scenario, *roofline, *step, *cluster);
  }
  return 0;
}

}  // namespace

void add_roofline_command(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<RooflineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "roofline",
      "Per-operation FLOPs, bytes, arithmetic intensity and memory/compute bound of one "
      "microbatch on one GPU after sharding, forward and backward; and the step time, tokens/s "
      "per GPU and MFU that follow");
  const char* io = "Input and output";
  cmd->add_option("--scenario", args->scenario_file,
                  "JSON file of scenario settings (keys as the flags with underscores)")
      ->group(io);
  cmd->add_option("--format", args->format, "output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str()
      ->group(io);
  const char* hw = "Cluster (defaults from the GPU catalog)";
  cmd->add_option("--gpu-catalog", args->catalog_file,
                  "GPU catalog JSON file to use instead of the built-in one (same format as "
                  "data/gpus.json)")
      ->group(hw);
  args->gpus_per_node =
      cmd->add_option("--gpus-per-node", args->gpus_per_node_value, "GPUs per node (NVLink domain)")
          ->group(hw);
  args->intra_node = cmd->add_option("--intra-node-gbps", args->intra_node_gbps,
                                     "NVLink/NVSwitch bandwidth per GPU, GB/s, one direction")
                         ->group(hw);
  args->inter_node = cmd->add_option("--inter-node-gbps", args->inter_node_gbps,
                                     "network bandwidth per GPU, GB/s, one direction (8×400 Gb/s "
                                     "per 8-GPU node = 50)")
                         ->group(hw);
  add_setting_flags(
      *cmd, scenario_options(), *args,
      {[](const OptionSpec&) { return "Scenario (as for `vramplan estimate`)"; }, {}});
  cmd->callback([run, args] { *run = [args] { return run_roofline(*args); }; });
}

}  // namespace vramplan::cli
