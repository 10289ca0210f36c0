// `vramplan estimate`: per-GPU training memory for one scenario.

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "hub/hub_models.h"
#include "vramplan/interop/emit.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/report/imported_report.h"
#include "vramplan/report/report.h"
#include "vramplan/report/settings_report.h"

namespace vramplan::cli {
namespace {

struct EstimateArgs : SettingsFlags {
  std::string format = "table";
  std::string color = "auto";
  int width = 0;
  std::string emit;  // a framework format: print the run as its config instead
};

int run_estimate(const EstimateArgs& args) {
  Result<nlohmann::json> settings = collect_settings(args);
  if (!settings) return report_error(settings.error());
  const FileReader reader = [](const std::string& path) { return read_text_file(path, "model"); };
  hub::HubModels hub_models;  // --model org/name[@revision]: the Hugging Face Hub
  Result<SettingsEstimate> result =
      estimate_settings(*settings, reader, hub_models.fetcher(reader));
  if (!result) return report_error(result.error());
  SettingsEstimate answer = std::move(result).value();
  const std::optional<nlohmann::json> checkpoint =
      hub_models.report(answer.estimate.parameters, answer.estimate.warnings);
  const Estimate& est = answer.estimate;

  const Scenario& scenario = answer.resolved.scenario;
  if (!args.emit.empty()) {
    Result<std::string> config = emit_training(scenario, *settings, args.emit);
    if (!config) return report_emit_error(config.error());
    std::cout << *config;
    return 0;
  }
  if (args.format == "json") {
    nlohmann::json out = settings_estimate_to_json(answer);
    if (checkpoint) out["checkpoint"] = *checkpoint;
    std::cout << out.dump(2) << "\n";
  } else if (args.format == "csv") {
    std::cout << render_csv(est);
  } else if (args.format == "markdown") {
    std::cout << render_markdown(scenario, est);
    if (answer.resolved.imported) std::cout << render_imported_markdown(*answer.resolved.imported);
  } else {
    const int width = terminal_width(args.width);
    std::cout << render_table(scenario, est, {width, use_color(args.color)});
    if (answer.resolved.imported) std::cout << render_imported(*answer.resolved.imported, width);
  }
  return 0;
}

}  // namespace

void add_estimate_command(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<EstimateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "estimate",
      "Per-GPU training memory: weights, gradients, optimizer, activations, buffers, per pipeline "
      "stage, with formulas and sources, and whether it fits each GPU.");
  cmd->add_option(
         "--scenario", args->scenario_file,
         "JSON file of settings (keys as the flags with underscores, e.g. {\"seq_len\": 8192}); "
         "flags given too override it")
      ->group("Input and output");
  cmd->add_option("--format", args->format, "output format")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}))
      ->capture_default_str()
      ->group("Input and output");
  cmd->add_option("--emit", args->emit,
                  "print the run as this framework's launch config or command line instead (" +
                      emit_format_names(ImportKind::kTraining) + "); --from reads it back")
      ->group("Input and output");
  cmd->add_option("--color", args->color, "colour the table: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str()
      ->group("Input and output");
  cmd->add_option("--width", args->width,
                  "columns for the table's bar chart (default: $COLUMNS or 100)")
      ->check(CLI::Range(40, 400))
      ->group("Input and output");
  add_setting_flags(*cmd, estimate_output_options(), *args);
  add_setting_flags(*cmd, scenario_options(), *args);
  cmd->callback([run, args] { *run = [args] { return run_estimate(*args); }; });
}

}  // namespace vramplan::cli
