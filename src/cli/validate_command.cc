// `vramplan validate`: every measured run predicted and compared, per row and per dataset.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "vramplan/validation/validation.h"

namespace vramplan::cli {
namespace {

struct ValidateArgs {
  std::string format = "table";
  bool rows = true;
  bool check = false;
  bool bands = false;
  bool serving = false;     // published serving figures instead (see infer_command.cc)
  bool throughput = false;  // the step-time suite instead (validate_throughput.cc)
  bool calibrate = false;
  bool planner = false;  // the planner's choices against measured throughput (plan_command.cc)
};

nlohmann::json to_json(const ValidationReport& report) {
  nlohmann::json out;
  for (const ValidationRow& r : report.rows) {
    nlohmann::json row = {{"dataset", r.dataset},
                          {"id", r.id},
                          {"group", r.group},
                          {"quantity", r.quantity},
                          {"skipped", r.skipped},
                          {"reason", r.reason},
                          {"measured_gib", r.measured_gib},
                          {"predicted_gib", r.predicted_gib},
                          {"verdict", r.verdict}};
    if (!r.skipped && r.measured_gib > 0) row["error_pct"] = r.error_pct();
    out["rows"].push_back(row);
  }
  for (const DatasetSummary& s : report.summaries)
    out["summaries"].push_back({{"dataset", s.dataset},
                                {"quantity", s.quantity},
                                {"rows", s.rows},
                                {"skipped", s.skipped},
                                {"median_abs_pct", s.median_abs_pct},
                                {"p90_abs_pct", s.p90_abs_pct},
                                {"bias_pct", s.bias_pct}});
  const FitConfusion& f = report.fit;
  out["fit_confusion"] = {
      {"ran", {{"fits", f.ran_fits}, {"tight", f.ran_tight}, {"oom", f.ran_oom}}},
      {"crashed", {{"fits", f.crashed_fits}, {"tight", f.crashed_tight}, {"oom", f.crashed_oom}}}};
  for (const AccuracyTarget& t : report.targets)
    out["targets"].push_back({{"name", t.name},
                              {"value", t.value},
                              {"target", t.target},
                              {"at_most", t.at_most},
                              {"met", t.met()}});
  const NoiseFloor& n = report.ultrascale_noise;
  out["ultrascale_noise_floor"] = {{"groups", n.groups},
                                   {"rows", n.rows},
                                   {"median_abs_pct", n.median_abs_pct},
                                   {"p90_abs_pct", n.p90_abs_pct}};
  return out;
}

void print_table(const ValidationReport& report, bool rows) {
  if (rows) {
    std::cout << fmt::format("{:<19} {:<62} {:<17} {:>9} {:>9} {:>8}  {}\n", "dataset", "run",
                             "quantity", "measured", "predicted", "error", "note");
    for (const ValidationRow& r : report.rows) {
      if (r.dataset == "ultrascale-crashed") continue;  // summarised in the confusion matrix
      const std::string error = r.skipped ? "skipped" : fmt::format("{:+.1f}%", r.error_pct());
      std::cout << fmt::format("{:<19} {:<62.62} {:<17} {:>9.2f} {:>9.2f} {:>8}  {}\n", r.dataset,
                               r.id, r.quantity, r.measured_gib, r.predicted_gib, error,
                               r.skipped ? r.reason : r.verdict);
    }
    std::cout << "\n";
  }
  std::cout << fmt::format("{:<12} {:<18} {:>5} {:>8} {:>10} {:>9} {:>8}\n", "dataset", "quantity",
                           "rows", "skipped", "median|e|", "p90|e|", "bias");
  for (const DatasetSummary& s : report.summaries)
    std::cout << fmt::format("{:<12} {:<18} {:>5} {:>8} {:>9.1f}% {:>8.1f}% {:>+7.1f}%\n",
                             s.dataset, s.quantity, s.rows, s.skipped, s.median_abs_pct,
                             s.p90_abs_pct, s.bias_pct);
  const FitConfusion& f = report.fit;
  std::cout << fmt::format(
      "\nUltra-Scale fit on H100 80GB   predicted fits  tight  oom\n"
      "  runs that ran               {:>14} {:>6} {:>4}\n"
      "  runs that crashed           {:>14} {:>6} {:>4}\n\n",
      f.ran_fits, f.ran_tight, f.ran_oom, f.crashed_fits, f.crashed_tight, f.crashed_oom);
  for (const AccuracyTarget& t : report.targets)
    std::cout << fmt::format("{:<4} {:<52} {:>7.1f}  (target {} {})\n", t.met() ? "ok" : "MISS",
                             t.name, t.value, t.at_most ? "<=" : ">=", t.target);
  const NoiseFloor& n = report.ultrascale_noise;
  std::cout << fmt::format(
      "\nUltra-Scale noise floor: {} runs in {} groups that must measure the same (ZeRO-0, full\n"
      "pipeline, same model/tp/pp/micro-batch) differ from their group's median by median "
      "{:.1f}%,\n"
      "p90 {:.1f}%: no prediction from the layout alone can do better on them.\n",
      n.rows, n.groups, n.median_abs_pct, n.p90_abs_pct);
}

// --check and --no-rows apply to the memory validation and --throughput only.
std::optional<Error> flags_taken(const ValidateArgs& args) {
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
  if (args.throughput || args.calibrate)
    return run_validate_throughput(args.format, args.rows, args.check, args.calibrate);
  Result<ValidationReport> report = validate_measurements();
  if (!report) return report_error(report.error());
  if (args.bands) {  // what data/uncertainty.json must hold
    std::cout << bands_to_json(derive_bands(*report)).dump(2) << "\n";
    return 0;
  }
  if (args.format == "json") {
    nlohmann::json j = to_json(*report);
    j["uncertainty"] = bands_to_json(derive_bands(*report));
    std::cout << j.dump(2) << "\n";
  } else {
    print_table(*report, args.rows);
  }
  if (!args.check) return 0;
  int missed = 0;
  for (const AccuracyTarget& t : report->targets) missed += !t.met();
  if (missed > 0) std::cerr << fmt::format("vramplan: {} accuracy target(s) missed\n", missed);
  return missed > 0 ? 1 : 0;
}

}  // namespace

void add_validate_command(CLI::App& app, std::function<int()>* run) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Predict every measured run in data/measurements (Megatron-LM functional tests, Ultra-Scale "
      "Playbook sweep) and report the error per row and per dataset");
  cmd->add_option("--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_flag("!--no-rows", args->rows, "print only the summaries");
  cmd->add_flag("--check", args->check, "exit 1 when an accuracy target is missed");
  cmd->add_flag("--bands", args->bands,
                "print the uncertainty bands the measurements support (data/uncertainty.json)");
  cmd->add_flag("--serving", args->serving,
                "published vLLM/SGLang serving figures (data/measurements/"
                "serving_published.csv): predicted vs logged, per row");
  cmd->add_flag("--throughput", args->throughput,
                "step time instead of memory: predicted vs measured tokens/s per GPU and MFU of "
                "the Ultra-Scale Playbook sweep, per row and per model");
  cmd->add_flag("--calibrate", args->calibrate,
                "refit the step-time constants on the calibration models and print them");
  cmd->add_flag("--planner", args->planner,
                "the planner instead: where its top choices rank, by measured throughput, among "
                "the Ultra-Scale Playbook layouts that ran, per (model, GPU count)");
  cmd->callback([run, args] { *run = [args] { return run_validate(*args); }; });
}

}  // namespace vramplan::cli
