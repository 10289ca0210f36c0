// `vramplan infer`: per-GPU serving memory, and how many KV tokens and sequences fit at an
// engine's memory fraction.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/settings_flags.h"
#include "hub/hub_models.h"
#include "validation/validation_modes.h"
#include "vramplan/interop/emit.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/io/inference_settings.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/report/imported_report.h"
#include "vramplan/report/inference_report.h"
#include "vramplan/report/settings_report.h"
#include "vramplan/serving/inference.h"
#include "vramplan/validation/serving_validation.h"

namespace vramplan::cli {
namespace {

struct InferArgs : SettingsFlags {
  std::string format = "table";
  std::string color = "auto";
  int width = 0;
  std::string emit;  // a serving engine: print the run as its command line instead
};

int run_infer(const InferArgs& args) {
  Result<nlohmann::json> settings = collect_settings(args);
  if (!settings) return report_error(settings.error());
  const FileReader reader = [](const std::string& path) { return read_text_file(path, "model"); };
  hub::HubModels hub_models;  // --model org/name[@revision]: the Hugging Face Hub
  Result<SettingsInference> result = infer_settings(*settings, reader, hub_models.fetcher(reader));
  if (!result) return report_error(result.error(), {inference_options(), scenario_options()});
  SettingsInference answer = std::move(result).value();
  InferenceEstimate& est = answer.estimate;
  const std::optional<nlohmann::json> checkpoint = hub_models.report(est.parameters, est.warnings);
  const InferenceScenario& s = answer.resolved.scenario;
  if (!args.emit.empty()) {
    Result<std::string> command = emit_serving(s, *settings, args.emit);
    if (!command) return report_emit_error(command.error());
    std::cout << *command;
    return 0;
  }
  if (args.format == "json") {
    nlohmann::json out = settings_inference_to_json(answer);
    if (checkpoint) out["checkpoint"] = *checkpoint;
    std::cout << out.dump(2) << "\n";
  } else if (args.format == "csv") {
    std::cout << render_inference_csv(est);
  } else if (args.format == "markdown") {
    std::cout << render_inference_markdown(s, est);
    if (answer.resolved.imported) std::cout << render_imported_markdown(*answer.resolved.imported);
  } else {
    const int width = terminal_width(args.width);
    std::cout << render_inference_table(s, est, {width, use_color(args.color)});
    if (answer.resolved.imported) std::cout << render_imported(*answer.resolved.imported, width);
  }
  return 0;
}

std::string signed_pct(const ServingCheck& c) { return fmt::format("{:+.1f}%", c.error_pct()); }

void print_serving(const ServingValidation& v) {
  std::cout << fmt::format("{:<38} {:<7} {:<16} {:>12} {:>12} {:>8}\n", "run", "engine", "quantity",
                           "published", "predicted", "error");
  for (const ServingCheck& c : v.rows) {
    const bool tokens = c.unit == "tokens";
    std::cout << fmt::format(
        "{:<38.38} {:<7} {:<16} {:>12} {:>12} {:>8}\n", c.id, c.engine, c.quantity,
        tokens ? fmt::format("{:.0f}", c.published) : fmt::format("{:.2f} GiB", c.published),
        tokens ? fmt::format("{:.0f}", c.predicted) : fmt::format("{:.2f} GiB", c.predicted),
        signed_pct(c));
  }
  std::cout << fmt::format("\n{:<16} {:>5} {:>10} {:>9}\n", "quantity", "rows", "median|e|",
                           "max|e|");
  for (const ServingSummary& s : v.summaries)
    std::cout << fmt::format("{:<16} {:>5} {:>9.1f}% {:>8.1f}%\n", s.quantity, s.rows,
                             s.median_abs_pct, s.max_abs_pct);
  std::cout << "\nSources and notes: data/measurements/serving_published.csv\n";
}

}  // namespace

int run_serving_validation(bool json) {
  Result<ServingValidation> v = validate_serving();
  if (!v) return report_error(v.error());
  if (!json) {
    print_serving(*v);
    return 0;
  }
  std::cout << serving_validation_to_json(*v).dump(2) << "\n";
  return 0;
}

void add_infer_command(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<InferArgs>();
  CLI::App* cmd = app.add_subcommand(
      "infer",
      "Per-GPU serving memory: weights in their real formats under TP/PP/EP, KV cache, the "
      "engine's activation peak, CUDA graphs and overheads; with --gpu-memory-utilization (vLLM) "
      "or --mem-fraction-static (SGLang), how many KV tokens and sequences fit.");
  cmd->add_option("--scenario", args->scenario_file,
                  "JSON file of settings (keys as the flags with underscores); flags given too "
                  "override it")
      ->group("Input and output");
  cmd->add_option("--format", args->format, "output format")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}))
      ->capture_default_str()
      ->group("Input and output");
  cmd->add_option("--emit", args->emit,
                  "print the run as this engine's launch command instead (" +
                      emit_format_names(ImportKind::kServing) + "); --from reads it back")
      ->group("Input and output");
  cmd->add_option("--color", args->color, "colour the table: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str()
      ->group("Input and output");
  cmd->add_option("--width", args->width, "columns for the table (default: $COLUMNS or 100)")
      ->check(CLI::Range(40, 400))
      ->group("Input and output");
  // Serving has no sharding: its parallelism group is titled plainly.
  add_setting_flags(*cmd, inference_options(), *args,
                    {[](const OptionSpec& o) {
                       const std::string group = o.group;
                       return group == "parallelism" ? std::string("Parallelism")
                                                     : std::string(group_title(o.group));
                     },
                     {}});
  cmd->callback([run, args] { *run = [args] { return run_infer(*args); }; });
}

}  // namespace vramplan::cli
