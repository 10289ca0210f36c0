// `vramplan roofline`: per-operation FLOPs, bytes, arithmetic intensity and bound of one
// microbatch on one GPU after sharding, and the step time, tokens/s per GPU and MFU they lead to.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "hub/hub_models.h"
#include "vramplan/io/options.h"
#include "vramplan/io/roofline_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/report/roofline_report.h"

namespace vramplan::cli {
namespace {

struct RooflineArgs : SettingsFlags {
  std::string catalog_file;
  std::string format = "table";
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

int run_roofline(const RooflineArgs& args) {
  Result<nlohmann::json> settings = collect_settings(args);
  if (!settings) return report_error(settings.error());
  const FileReader reader = [](const std::string& path) { return read_text_file(path, "model"); };
  Result<GpuCatalog> catalog = load_catalog(args.catalog_file);
  if (!catalog) return report_error(catalog.error());
  hub::HubModels hub_models;  // --model org/name[@revision]: the Hugging Face Hub
  Result<SettingsRoofline> result =
      roofline_settings(*settings, reader, hub_models.fetcher(reader), *catalog);
  if (!result) return report_error(result.error(), {roofline_options(), scenario_options()});
  const SettingsRoofline& answer = *result;
  for (const std::string& warning : answer.resolved.warnings)
    std::cerr << "vramplan: note: " << warning << "\n";
  if (args.format == "json") {
    std::cout << settings_roofline_to_json(answer).dump(2) << "\n";
  } else if (args.format == "csv") {
    std::cout << render_roofline_csv(answer.roofline);
  } else {
    std::cout << render_roofline_table(answer.resolved.scenario, answer.roofline, answer.step,
                                       answer.cluster);
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
  add_setting_flags(*cmd, roofline_options(), *args,
                    {[hw](const OptionSpec&) { return std::string(hw); }, {}});
  add_setting_flags(
      *cmd, scenario_options(), *args,
      {[](const OptionSpec&) { return "Scenario (as for `vramplan estimate`)"; }, {}});
  cmd->callback([run, args] { *run = [args] { return run_roofline(*args); }; });
}

}  // namespace vramplan::cli
