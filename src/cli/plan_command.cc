// `vramplan plan`: the fastest parallel layout that fits, for a model on N GPUs.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "vramplan/planner.h"
#include "vramplan/scenario_io.h"

namespace vramplan::cli {
namespace {

struct PlanArgs : SettingsFlags {
  std::string format = "table";
};

const char* group_of(const std::string& group) {
  if (group == "parallelism") return "Layout (given values are fixed; the rest are searched)";
  if (group == "hardware") return "GPU";
  return "Model and training";
}

void register_settings(CLI::App& cmd, PlanArgs& args) {
  for (const PlanOption& o : plan_options()) {
    std::string help = fmt::format("{} (default: {})", o.help, o.default_text);
    args.options[o.key] = cmd.add_option(flag_name(o.key), args.values[o.key], help)
                              ->group("Planner")
                              ->type_name(o.kind == OptionKind::kNumber ? "NUM" : "INT");
  }
  for (const OptionSpec& o : scenario_options()) {
    if (o.kind == OptionKind::kObject) continue;  // inline objects come from scenario files
    const bool gpus = std::string(o.key) == "gpus";
    add_setting_flag(cmd, o, gpus ? "GPUs to plan for (required)" : setting_help(o, false),
                     gpus ? "Planner" : group_of(o.group), args);
  }
}

// Planner settings are named as the flags a user typed, like scenario keys.
int report_plan_error(Error error) {
  for (const PlanOption& o : plan_options())
    if (error.field == o.key) error.field = flag_name(o.key);
  return report_error(error);
}

int run_plan(const PlanArgs& args) {
  Result<nlohmann::json> settings = collect_settings(args);
  if (!settings) return report_error(settings.error());
  const FileReader reader = [](const std::string& path) { return read_text_file(path, "model"); };
  Result<PlanResult> result = plan_from_settings(*settings, reader);
  if (!result) return report_plan_error(result.error());
  if (args.format == "json") {
    std::cout << plan_to_json(*result).dump(2) << "\n";
  } else {
    std::cout << render_plan(*result);
  }
  return 0;
}

}  // namespace

int run_validate_planner(const std::string& format) {
  Result<PlannerCheck> check = check_planner_on_ultrascale();
  if (!check) return report_error(check.error());
  if (format == "json") {
    std::cout << planner_check_to_json(*check).dump(2) << "\n";
  } else {
    std::cout << render_planner_check(*check);
  }
  return 0;
}

void add_plan_command(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Search every parallel layout (TP, SP, PP with schedule and virtual stages, CP, EP, expert "
      "TP, DP, micro-batch, recompute, ZeRO/FSDP) of a model on N GPUs; keep those that fit with "
      "headroom and rank them by estimated throughput. Layout flags given are held fixed.");
  cmd->add_option("--scenario", args->scenario_file,
                  "JSON file of settings (keys as the flags with underscores); flags override it")
      ->group("Input and output");
  cmd->add_option("--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str()
      ->group("Input and output");
  register_settings(*cmd, *args);
  cmd->callback([run, args] { *run = [args] { return run_plan(*args); }; });
}

}  // namespace vramplan::cli
