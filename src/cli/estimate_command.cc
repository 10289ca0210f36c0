// `vramplan estimate`: per-GPU training memory for one scenario.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "hub/hub_models.h"
#include "vramplan/estimate_request.h"
#include "vramplan/report.h"
#include "vramplan/scenario_io.h"

namespace vramplan::cli {
namespace {

struct EstimateArgs {
  std::map<std::string, std::string> values;  // scenario key -> text as typed
  std::map<std::string, CLI::Option*> options;
  std::map<std::string, bool> negated;  // --no-<flag> given
  std::string scenario_file;
  std::string format = "table";
  std::string color = "auto";
  int width = 0;
};

std::string help_text(const OptionSpec& o) {
  std::string text = o.help;
  if (o.kind == OptionKind::kChoice) text += fmt::format(" [{}]", o.choices);
  if (o.default_text[0] != '\0') text += fmt::format(" (default: {})", o.default_text);
  return text;
}

std::string group_title(const std::string& group) {
  static const std::map<std::string, std::string> titles = {
      {"model", "Model"},
      {"moe", "Mixture of experts"},
      {"training", "Training"},
      {"precision", "Precision and optimizer"},
      {"parallelism", "Parallelism and sharding"},
      {"hardware", "GPU"},
      {"overheads", "Memory beyond tensors"}};
  auto it = titles.find(group);
  return it == titles.end() ? group : it->second;
}

const char* type_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::kInteger:
      return "INT";
    case OptionKind::kNumber:
      return "NUM";
    case OptionKind::kBool:
      return "[BOOL]";
    case OptionKind::kChoice:
      return "CHOICE";
    default:
      return "TEXT";
  }
}

void register_scenario_options(CLI::App& cmd, EstimateArgs& args) {
  for (const OptionSpec& o : scenario_options()) {
    if (o.kind == OptionKind::kObject) continue;  // inline objects come from scenario files
    const std::string key = o.key;
    CLI::Option* opt = cmd.add_option(flag_name(key), args.values[key], help_text(o));
    opt->group(group_title(o.group));
    opt->type_name(type_name(o.kind));
    if (o.kind == OptionKind::kBool) {
      opt->expected(0, 1);  // "--flag" alone means true
      cmd.add_flag(flag_name("no_" + key), args.negated[key],
                   "same as " + flag_name(key) + " false")
          ->group(group_title(o.group));
    }
    args.options[key] = opt;
  }
}

// The settings the user gave, scenario file first, flags on top.
Result<nlohmann::json> collect_settings(const EstimateArgs& args) {
  nlohmann::json settings = nlohmann::json::object();
  if (!args.scenario_file.empty()) {
    Result<std::string> text = read_text_file(args.scenario_file, "scenario");
    if (!text) return text.error();
    settings = nlohmann::json::parse(*text, nullptr, false);
    if (settings.is_discarded() || !settings.is_object())
      return Error{"scenario", args.scenario_file,
                   "a JSON object of settings (keys as the flags, with underscores)",
                   "not a valid JSON object"};
  }
  for (const auto& [key, option] : args.options) {
    if (option->count() == 0) continue;
    const std::string& value = args.values.at(key);
    const bool bare_flag = value.empty() && option->get_expected_min() == 0;
    settings[key] = bare_flag ? "true" : value;  // only booleans may stand alone
  }
  for (const auto& [key, given] : args.negated)
    if (given) settings[key] = "false";
  return settings;
}

bool use_color(const std::string& color) {
  if (color == "always") return true;
  if (color == "never") return false;
  return isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
}

int terminal_width(int requested) {
  if (requested > 0) return requested;
  if (const char* columns = getenv("COLUMNS")) {
    const int w = atoi(columns);
    if (w >= 40) return w;
  }
  return 100;
}

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
      hub_models.report(answer.estimate.parameters.total, answer.estimate.warnings);
  const Estimate& est = answer.estimate;

  const Scenario& scenario = answer.resolved.scenario;
  if (args.format == "json") {
    nlohmann::json out = settings_estimate_to_json(answer);
    if (checkpoint) out["checkpoint"] = *checkpoint;
    std::cout << out.dump(2) << "\n";
  } else if (args.format == "csv") {
    std::cout << render_csv(est);
  } else if (args.format == "markdown") {
    std::cout << render_markdown(scenario, est);
  } else {
    std::cout << render_table(scenario, est, {terminal_width(args.width), use_color(args.color)});
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
  cmd->add_option("--color", args->color, "colour the table: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str()
      ->group("Input and output");
  cmd->add_option("--width", args->width,
                  "columns for the table's bar chart (default: $COLUMNS or 100)")
      ->check(CLI::Range(40, 400))
      ->group("Input and output");
  register_scenario_options(*cmd, *args);
  cmd->callback([run, args] { *run = [args] { return run_estimate(*args); }; });
}

}  // namespace vramplan::cli
