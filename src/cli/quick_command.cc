// `vramplan quick`: the coarse calculator (docs/quick.md) — memory from a parameter count, layers
// and hidden size, each row with its formula and source, beside vramplan's full estimate of the
// matching architecture.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "vramplan/io/quick_settings.h"
#include "vramplan/report/quick_report.h"

namespace vramplan::cli {
namespace {

struct QuickArgs : SettingsFlags {
  std::string format = "table";
  std::string color = "auto";
  int width = 0;
  bool list_examples = false;
};

int run_quick(const QuickArgs& args) {
  if (args.list_examples) {
    if (args.format == "json")
      std::cout << quick_examples_json().dump(2) << "\n";
    else
      std::cout << render_quick_examples();
    return 0;
  }
  Result<nlohmann::json> settings = collect_settings(args);
  if (!settings) return report_error(settings.error());
  Result<QuickAnswer> answer = quick_settings(*settings);
  if (!answer) return report_error(answer.error(), {quick_options()});
  if (args.format == "json") {
    std::cout << quick_to_json(*answer).dump(2) << "\n";
  } else if (args.format == "csv") {
    std::cout << render_quick_csv(*answer);
  } else {
    std::cout << render_quick_table(*answer, {terminal_width(args.width), use_color(args.color)});
  }
  return 0;
}

}  // namespace

void add_quick_command(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<QuickArgs>();
  CLI::App* cmd = app.add_subcommand(
      "quick",
      "The quick calculator: weights, master weights, gradients, optimizer states, activations "
      "(b·s·h·L × tensors per token and layer), KV cache and overhead from a parameter count, "
      "layers and hidden size; beside it the full estimate of a matching architecture "
      "(docs/quick.md)");
  const char* io = "Input and output";
  cmd->add_option("--scenario", args->scenario_file,
                  "JSON file of settings (keys as the flags with underscores); flags given too "
                  "override it")
      ->group(io);
  cmd->add_option("--format", args->format, "output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str()
      ->group(io);
  cmd->add_flag("--list-examples", args->list_examples,
                "list the shipped example scenarios (run one with --example NAME)")
      ->group(io);
  cmd->add_option("--color", args->color, "colour the table: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str()
      ->group(io);
  cmd->add_option("--width", args->width, "columns for the table (default: $COLUMNS or 100)")
      ->check(CLI::Range(40, 400))
      ->group(io);
  add_setting_flags(*cmd, quick_options(), *args);
  cmd->callback([run, args] { *run = [args] { return run_quick(*args); }; });
}

}  // namespace vramplan::cli
