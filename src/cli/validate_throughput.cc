// `vramplan validate --throughput`: the step-time model against the Ultra-Scale Playbook sweep's
// measured tokens/s per GPU and MFU; `--calibrate` refits the step-time constants.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "validation/throughput/throughput_validation.h"
#include "validation/validation_modes.h"

namespace vramplan::cli {
namespace {

std::string published_title(const char* constants) {
  return fmt::format(
      "Published throughput (data/measurements/published_throughput.csv; {}; held out: Qwen3, "
      "Llama 2)",
      constants);
}

void print_published(const PublishedReport& report, bool rows, const std::string& title) {
  std::cout << title << "\n";
  if (rows) {
    for (const PublishedRow& r : report.rows) {
      if (r.skipped) {
        std::cout << fmt::format("{:<44} {:>5} skipped: {}\n", r.id, r.gpus, r.reason);
        continue;
      }
      std::cout << fmt::format("{:<44} {:>5} {:>9.0f} {:>9.0f} {:>+7.1f}%\n", r.id, r.gpus,
                               r.measured_tok_s, r.predicted_tok_s, r.error_pct());
    }
  }
  std::cout << fmt::format("{:<28} {:>5} {:>8} {:>10} {:>9} {:>8} {:>10}\n", "group", "rows",
                           "skipped", "median|e|", "p90|e|", "bias", "rho tok/s");
  for (const PublishedSummary& s : report.summaries)
    std::cout << fmt::format("{:<28} {:>5} {:>8} {:>9.1f}% {:>8.1f}% {:>+7.1f}% {:>10.3f}\n",
                             s.group, s.rows, s.skipped, s.median_abs_pct, s.p90_abs_pct,
                             s.bias_pct, s.spearman);
  const NoiseFloor& all = report.release_floor;
  const NoiseFloor& held = report.held_out_release_floor;
  if (all.rows > 0)
    std::cout << fmt::format(
        "Same layout, other releases: {} rows in {} groups differ from their group's median by "
        "median {:.1f}%, p90 {:.1f}% (held out: {} rows, median {:.1f}%, p90 {:.1f}%)\n",
        all.rows, all.groups, all.median_abs_pct, all.p90_abs_pct, held.rows, held.median_abs_pct,
        held.p90_abs_pct);
  std::cout << "\n";
}

void print_group_rankings(const ThroughputReport& report) {
  std::cout << fmt::format(
      "Ordering within each (model, GPU count) group of the sweep: Spearman's rho of predicted "
      "and measured tokens/s (groups of 3 or more runs; goal >= {:g}), and of the sweep against "
      "itself: its ZeRO-0 and ZeRO-1 runs of the same layouts (3 or more pairs)\n",
      kGroupRankingGoal);
  std::cout << fmt::format("{:<6} {:>5} {:>5} {:>8} {:>6} {:>9}\n", "model", "gpus", "runs", "rho",
                           "twins", "twin rho");
  for (const GroupRanking& g : report.group_rankings) {
    const std::string twins =
        g.twin_pairs > 0 ? fmt::format("{:>6} {:>9.3f}", g.twin_pairs, g.twin_spearman) : "";
    std::cout << fmt::format("{:<6} {:>5} {:>5} {:>8.3f} {}\n", g.model, g.gpus, g.rows,
                             g.spearman_tok, twins);
  }
  std::cout << "\n";
}

void print_table(const ThroughputReport& report, bool rows) {
  if (rows) {
    std::cout << fmt::format("{:<40} {:>5} {:>9} {:>9} {:>8} {:>7} {:>7} {:>8}\n", "run", "gpus",
                             "tok/s", "predicted", "error", "MFU %", "pred.", "error");
    for (const ThroughputRow& r : report.rows) {
      if (r.skipped) {
        std::cout << fmt::format("{:<40} {:>5} {:>9.0f} skipped: {}\n", r.id, r.gpus,
                                 r.measured_tok_s, r.reason);
        continue;
      }
      std::cout << fmt::format(
          "{:<40} {:>5} {:>9.0f} {:>9.0f} {:>+7.1f}% {:>7.1f} {:>7.1f} {:>+7.1f}%\n", r.id, r.gpus,
          r.measured_tok_s, r.predicted_tok_s, r.tok_error_pct(), r.measured_mfu_pct,
          r.predicted_mfu_pct, r.mfu_error_pct());
    }
    std::cout << "\n";
  }
  std::cout << fmt::format("{:<6} {:<9} {:>5} {:>8} {:>11} {:>9} {:>8} {:>11} {:>10} {:>10}\n",
                           "model", "constants", "rows", "skipped", "median|e|", "p90|e|", "bias",
                           "MFU med|e|", "rho tok/s", "rho MFU");
  for (const ThroughputSummary& s : report.summaries)
    std::cout << fmt::format(
        "{:<6} {:<9} {:>5} {:>8} {:>10.1f}% {:>8.1f}% {:>+7.1f}% {:>10.1f}% {:>10.3f} {:>10.3f}\n",
        s.model, s.model == "all" ? "" : (s.fitted ? "fitted" : "held out"), s.rows, s.skipped,
        s.median_abs_tok_pct, s.p90_abs_tok_pct, s.bias_tok_pct, s.median_abs_mfu_pct,
        s.spearman_tok, s.spearman_mfu);
  std::cout << "\n";
  print_published(report.published, rows,
                  published_title("the Ultra-Scale constants, none fitted on it"));
  print_published(report.gpu_measured, rows,
                  "Measured here on one GPU (data/measurements/gpu_step_time.csv; Hugging Face "
                  "transformers eager, SDPA, fused AdamW; the same constants, none fitted on it)");
  print_group_rankings(report);
  for (const AccuracyTarget& t : report.targets) {
    const char* status = t.met() ? "ok" : (t.passes() ? "OPEN" : "MISS");
    std::cout << fmt::format("{:<4} {:<72} {:>7.3f}  (target {} {}", status, t.name, t.value,
                             t.at_most ? "<=" : ">=", t.target);
    if (t.open()) std::cout << fmt::format("; open, committed {:g}", t.committed);
    std::cout << ")\n";
  }
}

int run_calibration(const std::string& format) {
  Result<Calibration> fit = calibrate_step_time(calibration_models());
  if (!fit) return report_error(fit.error());
  nlohmann::json out = {{"models", fit->models},
                        {"rows", fit->rows},
                        {"evaluations", fit->evaluations},
                        {"start_objective", fit->start_objective},
                        {"objective", fit->objective},
                        {"constants", step_time_constants_to_json(fit->constants)}};
  if (format == "json") {
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << fmt::format(
        "Fitted on {} rows of {}: mean Cauchy loss of ln(predicted/measured) {:.4f} -> {:.4f} ({} "
        "evaluations)\n{}\n",
        fit->rows, fmt::format("{}", out["models"].dump()), fit->start_objective, fit->objective,
        fit->evaluations, out["constants"].dump(2));
  }
  return 0;
}

}  // namespace

int run_calibrate_published(const std::string& format) {
  Result<PublishedCalibration> fit = calibrate_published();
  if (!fit) return report_error(fit.error());
  Result<PublishedReport> after = validate_published_throughput(fit->constants);
  if (!after) return report_error(after.error());
  if (format == "json") {
    nlohmann::json out = published_report_to_json(*after);
    out["calibration"] = {{"rows", fit->rows},
                          {"evaluations", fit->evaluations},
                          {"start_objective", fit->start_objective},
                          {"objective", fit->objective},
                          {"constants", step_time_constants_to_json(fit->constants)}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "Fitted on {} published Megatron-Bridge / NeMo rows (held out: Qwen3, Llama 2): mean Cauchy "
      "loss of ln(predicted/measured) {:.4f} -> {:.4f} ({} evaluations)\n{}\n\n",
      fit->rows, fit->start_objective, fit->objective, fit->evaluations,
      step_time_constants_to_json(fit->constants).dump(2));
  print_published(*after, false, published_title("the constants just fitted on the rest"));
  return 0;
}

int run_validate_throughput(const std::string& format, bool rows, bool check, bool calibrate) {
  if (calibrate) return run_calibration(format);
  Result<ThroughputReport> report = validate_throughput();
  if (!report) return report_error(report.error());
  if (format == "json") {
    std::cout << throughput_report_to_json(*report).dump(2) << "\n";
  } else {
    print_table(*report, rows);
  }
  if (!check) return 0;
  const int missed = throughput_targets_missed(*report);
  if (missed > 0) std::cerr << fmt::format("vramplan: {} throughput target(s) missed\n", missed);
  return missed > 0 ? 1 : 0;
}

}  // namespace vramplan::cli
