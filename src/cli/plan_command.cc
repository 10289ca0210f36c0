// `vramplan plan`: the fastest parallel layout that fits, for a model on N GPUs.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "vramplan/interop/emit.h"
#include "vramplan/io/plan_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/plan/planner.h"
#include "vramplan/report/plan_emit.h"
#include "vramplan/report/plan_report.h"
#include "vramplan/validation/planner_check.h"

namespace vramplan::cli {
namespace {

struct PlanArgs : SettingsFlags {
  std::string format = "table";
  std::string emit;  // a framework format: print the winner as its config instead
};

// The best-ranked layout the format can write, as its config (report/plan_emit.h); stderr says
// which choice was written and why when it is not the first, so stdout holds the config alone.
int emit_winner(const PlanResult& result, const std::string& format, const FileReader& reader) {
  Result<PlanEmit> emitted = emit_plan_winner(result, format, reader);
  if (!emitted) return report_emit_error(emitted.error());
  if (emitted->choice > 0)
    std::cerr << fmt::format("vramplan: writing choice #{} ({}): #1 cannot be written as {}: {}\n",
                             emitted->choice + 1, emitted->layout, format, emitted->skipped);
  std::cout << emitted->config;
  return 0;
}

// Layout flags given fix that dimension; the others are searched.
std::string plan_title(const OptionSpec& o) {
  const std::string group = o.group;
  if (group == "parallelism") return "Layout (given values are fixed; the rest are searched)";
  if (group == "hardware") return "GPU";
  if (std::string(o.key) == "gpus") return "Planner";
  return "Model and training";
}

void register_settings(CLI::App& cmd, PlanArgs& args) {
  add_setting_flags(cmd, plan_options(), args);
  add_setting_flags(cmd, scenario_options(), args, {plan_title, [](const OptionSpec& o) {
                                                      return std::string(o.key) == "gpus"
                                                                 ? "GPUs to plan for (required)"
                                                                 : setting_help(o, false);
                                                    }});
}

int run_plan(const PlanArgs& args) {
  Result<nlohmann::json> settings = collect_settings(args);
  if (!settings) return report_error(settings.error());
  const FileReader reader = [](const std::string& path) { return read_text_file(path, "model"); };
  Result<PlanResult> result = plan_from_settings(*settings, reader);
  if (!result) return report_error(result.error(), {plan_options(), scenario_options()});
  if (!args.emit.empty()) return emit_winner(*result, args.emit, reader);
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
  cmd->add_option("--emit", args->emit,
                  "print the first choice as this framework's launch config instead (" +
                      emit_format_names(ImportKind::kTraining) + ")")
      ->group("Input and output");
  register_settings(*cmd, *args);
  cmd->callback([run, args] { *run = [args] { return run_plan(*args); }; });
}

}  // namespace vramplan::cli
