// `vramplan fit QUESTION`: the largest micro-batch, sequence length or global batch that fits a
// layout, or the smallest GPU count with a layout that fits (docs/fit.md).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "vramplan/io/fit_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/report/fit_report.h"

namespace vramplan::cli {
namespace {

struct FitArgs : SettingsFlags {
  std::string format = "table";
};

std::string fit_title(const OptionSpec& o) {
  const std::string group = o.group;
  if (group == "fit") return "What fits";
  if (group == "plan") return "Planner (headroom: every question; the rest: gpus only)";
  if (group == "parallelism") return "Layout (the gpus question searches what is not given)";
  if (group == "hardware") return "GPU";
  return std::string(group_title(o.group));
}

int run_fit(const FitArgs& args) {
  Result<nlohmann::json> settings = collect_settings(args);
  if (!settings) return report_error(settings.error());
  const FileReader reader = [](const std::string& path) { return read_text_file(path, "model"); };
  Result<FitAnswer> answer = fit_from_settings(*settings, reader);
  if (!answer) {
    if (answer.error().field == "question") return report_error(answer.error(), {});
    return report_error(answer.error(), {fit_options(), plan_options(), scenario_options()});
  }
  if (args.format == "json") {
    std::cout << fit_to_json(*answer).dump(2) << "\n";
  } else {
    std::cout << render_fit(*answer);
  }
  return 0;
}

}  // namespace

void add_fit_command(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<FitArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fit",
      "What fits, found by search: the largest micro-batch, seq-len or global-batch that fits the "
      "layout given, or the smallest number of gpus with a layout that fits (the planner). Exit "
      "0 with the answer, also when nothing fits (JSON fits: false).");
  CLI::Option* question =
      cmd->add_option("question", args->values["question"],
                      "micro-batch, seq-len, global-batch (largest that fits) or gpus (smallest)")
          ->required()
          ->check(CLI::IsMember({"micro-batch", "micro_batch", "seq-len", "seq_len", "global-batch",
                                 "global_batch", "gpus"}));
  args->options["question"] = question;
  cmd->add_option("--scenario", args->scenario_file,
                  "JSON file of settings (keys as the flags with underscores); flags override it")
      ->group("Input and output");
  cmd->add_option("--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str()
      ->group("Input and output");
  for (const OptionSpec& o : fit_options()) {
    if (std::string(o.key) == "question") continue;
    add_setting_flag(*cmd, o, setting_help(o), fit_title(o), *args, setting_type_name(o.kind));
  }
  add_setting_flags(*cmd, plan_options(), *args,
                    {fit_title, [](const OptionSpec& o) {
                       const std::string key = o.key;
                       if (key == "offload_search")
                         return setting_help(o, false) +
                                " (default here: never; offload is another answer to how few GPUs)";
                       if (key == "top") return setting_help(o) + " (in the JSON's plan)";
                       return setting_help(o);
                     }});
  add_setting_flags(*cmd, scenario_options(), *args, {fit_title, {}});
  cmd->callback([run, args] { *run = [args] { return run_fit(*args); }; });
}

}  // namespace vramplan::cli
