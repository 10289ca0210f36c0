// `vramplan validate`: every measured run predicted and compared, per row and per dataset.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "validation/validation_modes.h"
#include "vramplan/validation/validation.h"
#include "vramplan/validation/validation_json.h"

namespace vramplan::cli {
namespace {

struct ValidateArgs {
  std::string format = "table";
  std::string dataset;  // only this dataset's rows and summaries ("" = all)
  bool rows = true;
  bool check = false;
  bool bands = false;
  bool serving = false;     // published serving figures instead (see infer_command.cc)
  bool throughput = false;  // the step-time suite instead (validate_throughput.cc)
  bool calibrate = false;
  bool calibrate_published =
      false;             // refit on the published Megatron rows (published_throughput.h)
  bool planner = false;  // the planner's choices against measured throughput (plan_command.cc)
};

const char* gate_status(const AccuracyTarget& t) {
  return t.met() ? "ok" : t.passes() ? "OPEN" : "MISS";
}

void print_rows(const ValidationReport& report, const std::string& only) {
  size_t id_width = 12, quantity_width = 8;
  for (const ValidationRow& r : report.rows) {
    if (!dataset_shown(r.dataset, only) || r.dataset == "ultrascale-crashed") continue;
    id_width = std::max(id_width, r.id.size());
    quantity_width = std::max(quantity_width, r.quantity.size());
  }
  std::cout << fmt::format("{:<19} {:<{}} {:<{}} {:>9} {:>9} {:>8}  {}\n", "dataset", "run",
                           id_width, "quantity", quantity_width, "measured", "predicted", "error",
                           "note");
  for (const ValidationRow& r : report.rows) {
    if (!dataset_shown(r.dataset, only)) continue;
    if (r.dataset == "ultrascale-crashed") continue;  // summarised in the confusion matrix
    const std::string error = r.skipped ? "skipped" : fmt::format("{:+.1f}%", r.error_pct());
    std::cout << fmt::format("{:<19} {:<{}} {:<{}} {:>9.2f} {:>9.2f} {:>8}  {}\n", r.dataset, r.id,
                             id_width, r.quantity, quantity_width, r.measured_gib, r.predicted_gib,
                             error, r.skipped ? r.reason : r.verdict);
  }
  std::cout << "\n";
}

void print_parameter_counts(const ValidationReport& report) {
  int differ = 0;
  for (const ParameterCountCheck& c : report.parameter_counts) {
    if (c.matches()) continue;
    if (differ++ == 0)
      std::cout << fmt::format("{:<24} {:<32} {:>16} {:>16} {:>12}\n", "preset", "part",
                               "reference", "vramplan", "difference");
    std::cout << fmt::format("{:<24} {:<32} {:>16} {:>16} {:>+12}\n", c.preset, c.part, c.reference,
                             c.vramplan, c.vramplan - c.reference);
  }
  std::cout << fmt::format(
      "{}Parameter counts against the real model classes (PyTorch reference): {} of {} parts "
      "equal\n\n",
      differ > 0 ? "\n" : "", report.parameter_counts.size() - differ,
      report.parameter_counts.size());
}

void print_table(const ValidationReport& report, bool rows, const std::string& only) {
  if (rows) print_rows(report, only);
  std::cout << fmt::format("{:<17} {:<34} {:>5} {:>8} {:>10} {:>9} {:>8}\n", "dataset", "quantity",
                           "rows", "skipped", "median|e|", "p90|e|", "bias");
  for (const DatasetSummary& s : report.summaries) {
    if (!dataset_shown(s.dataset, only)) continue;
    std::cout << fmt::format("{:<17} {:<34} {:>5} {:>8} {:>9.1f}% {:>8.1f}% {:>+7.1f}%\n",
                             s.dataset, s.quantity, s.rows, s.skipped, s.median_abs_pct,
                             s.p90_abs_pct, s.bias_pct);
  }
  if (dataset_shown("pytorch-reference", only))
    std::cout << "  (pytorch-reference categories: error in % of the measured peak)\n";
  const FitConfusion& f = report.fit;
  if (dataset_shown("ultrascale", only))
    std::cout << fmt::format(
        "\nUltra-Scale fit on H100 80GB   predicted fits  tight  oom\n"
        "  runs that ran               {:>14} {:>6} {:>4}\n"
        "  runs that crashed           {:>14} {:>6} {:>4}\n",
        f.ran_fits, f.ran_tight, f.ran_oom, f.crashed_fits, f.crashed_tight, f.crashed_oom);
  std::cout << "\n";
  if (dataset_shown("pytorch-reference", only)) print_parameter_counts(report);
  for (const AccuracyTarget& t : report.targets) {
    if (!target_shown(t, only)) continue;
    std::cout << fmt::format("{:<4} {:<76} {:>6.1f}  (target {} {}{})\n", gate_status(t), t.name,
                             t.value, t.at_most ? "<=" : ">=", t.target,
                             t.open() ? fmt::format("; open, committed {:.1f}", t.committed) : "");
  }
  if (!dataset_shown("ultrascale", only)) return;
  const NoiseFloor& n = report.ultrascale_noise;
  std::cout << fmt::format(
      "\nUltra-Scale noise floor: {} runs in {} groups that must measure the same (ZeRO-0, full\n"
      "pipeline, same model/tp/pp/micro-batch) differ from their group's median by median "
      "{:.1f}%,\n"
      "p90 {:.1f}%: no prediction from the layout alone can do better on them.\n",
      n.rows, n.groups, n.median_abs_pct, n.p90_abs_pct);
}

// --check and --no-rows apply to the memory validation and --throughput only; --dataset to the
// memory validation only.
std::optional<Error> flags_taken(const ValidateArgs& args) {
  if (!args.dataset.empty() && (args.serving || args.planner || args.bands || args.throughput ||
                                args.calibrate || args.calibrate_published))
    return Error{"--dataset", args.dataset, "the memory validation",
                 "--serving, --planner, --bands, --throughput and --calibrate(-published) do not "
                 "take it"};
  const char* mode = args.serving   ? "--serving"
                     : args.planner ? "--planner"
                     : args.bands   ? "--bands"
                                    : nullptr;
  if (mode == nullptr) return std::nullopt;
  const char* flag = args.check ? "--check" : !args.rows ? "--no-rows" : nullptr;
  if (flag == nullptr) return std::nullopt;
  return Error{flag, "true", "the memory validation or --throughput",
               fmt::format("{} does not take it", mode)};
}

int run_validate(const ValidateArgs& args) {
  if (std::optional<Error> e = flags_taken(args)) return report_error(*e);
  if (args.serving) return run_serving_validation(args.format == "json");
  if (args.planner) return run_validate_planner(args.format);
  if (args.calibrate_published) return run_calibrate_published(args.format);
  if (args.throughput || args.calibrate)
    return run_validate_throughput(args.format, args.rows, args.check, args.calibrate);
  Result<ValidationReport> report = validate_measurements();
  if (!report) return report_error(report.error());
  if (args.bands) {  // what data/uncertainty.json must hold
    std::cout << bands_to_json(derive_bands(*report)).dump(2) << "\n";
    return 0;
  }
  if (args.format == "json") {
    nlohmann::json j = validation_to_json(*report, args.dataset);
    if (args.dataset.empty()) j["uncertainty"] = bands_to_json(derive_bands(*report));
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(*report, args.rows, args.dataset);
  }
  if (!args.check) return 0;
  // The gate: a target is met, or open and no worse than its committed figure
  // (docs/accuracy.md lists the open ones).
  const auto [failed, open] = memory_gate(*report, args.dataset);
  if (failed > 0)
    std::cerr << fmt::format(
        "vramplan: {} accuracy target(s) missed: worse than the target and than the figure "
        "committed for it\n",
        failed);
  else if (open > 0)
    std::cerr << fmt::format(
        "vramplan: {} target(s) still open, none worse than its committed figure\n", open);
  return failed > 0 ? 1 : 0;
}

}  // namespace

void add_validate_command(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Predict every measured run in data/measurements (Megatron-LM functional tests, Ultra-Scale "
      "Playbook sweep, torchtitan's published tables, the PyTorch reference, the reference's runs "
      "on a "
      "real GPU) and report the error "
      "per row and per dataset");
  cmd->add_option("--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_flag("!--no-rows", args->rows, "print only the summaries");
  cmd->add_option("--dataset", args->dataset,
                  "only this dataset's rows, summaries and targets: megatron, ultrascale, "
                  "torchtitan, pytorch-reference or gpu-measured")
      ->check(CLI::IsMember(validation_datasets()));
  cmd->add_flag("--check", args->check,
                "exit 1 when an accuracy target is missed (an open target: when it is worse than "
                "its committed figure)");
  cmd->add_flag("--bands", args->bands,
                "print the uncertainty bands the measurements support (data/uncertainty.json)");
  cmd->add_flag("--serving", args->serving,
                "published vLLM/SGLang serving figures (data/measurements/"
                "serving_published.csv): predicted vs logged, per row");
  cmd->add_flag("--throughput", args->throughput,
                "step time instead of memory: predicted vs measured tokens/s per GPU and MFU of "
                "the Ultra-Scale Playbook sweep, per row and per model, and vs the published "
                "throughput of named layouts (data/measurements/published_throughput.csv)");
  cmd->add_flag("--calibrate", args->calibrate,
                "refit the step-time constants on the calibration models and print them");
  cmd->add_flag("--calibrate-published", args->calibrate_published,
                "refit the step-time constants on the published Megatron-Bridge / NeMo rows that "
                "are not held out, and print them with every group's error under them");
  cmd->add_flag("--planner", args->planner,
                "the planner instead: where its top choices rank, by measured throughput, among "
                "the Ultra-Scale Playbook layouts that ran, per (model, GPU count)");
  cmd->callback([run, args] { *run = [args] { return run_validate(*args); }; });
}

}  // namespace vramplan::cli
