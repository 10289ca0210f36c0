// `vramplan models` and `vramplan gpus`: what presets and GPUs can be named.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/params.h"
#include "vramplan/model/presets.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/report/catalog_json.h"
#include "vramplan/report/report.h"

namespace vramplan::cli {
namespace {

struct ListOptions {
  std::string format = "table";
};

int list_models(const ListOptions& opt) {
  if (opt.format == "json") {
    std::cout << presets_json().dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<26} {:<34} {:<12} {:>10} {:>10}\n", "preset", "hub id", "type",
                           "params", "active");
  for (const Preset& p : presets()) {
    Result<ParsedModel> parsed = parse_hf_config(p.config, p.name);
    if (!parsed) continue;
    const ParamCounts counts = count_parameters(parsed->model);
    std::cout << fmt::format("{:<26} {:<34} {:<12} {:>9.2f}B {:>9.2f}B\n", p.name, p.hub_id,
                             parsed->model.model_type, counts.total / 1e9, counts.active / 1e9);
  }
  return 0;
}

int list_gpus(const ListOptions& opt) {
  if (opt.format == "json") {
    std::cout << gpus_json().dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<18} {:<36} {:>10} {:>12}\n", "id", "name", "nominal", "usable");
  for (const Gpu& g : builtin_gpus().gpus) {
    std::cout << fmt::format("{:<18} {:<36} {:>8.0f}GB {:>12}\n", g.id, g.name,
                             g.nominal_bytes / 1e9, format_bytes(g.usable_bytes));
  }
  return 0;
}

}  // namespace

void add_list_commands(CLI::App& app, std::function<int()>* run) {
  auto options = std::make_shared<ListOptions>();
  CLI::App* models =
      app.add_subcommand("models", "List the model presets (name, Hub id, parameters)");
  models->add_option("--format", options->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  models->callback([run, options] { *run = [options] { return list_models(*options); }; });
  CLI::App* gpus = app.add_subcommand("gpus", "List the GPU catalog (id, usable memory)");
  gpus->add_option("--format", options->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  gpus->callback([run, options] { *run = [options] { return list_gpus(*options); }; });
}

}  // namespace vramplan::cli
