#include "validation/throughput/gpu_step_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/csv.h"
#include "base/embedded_data.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {
namespace {

using nlohmann::json;

constexpr const char* kMeasured = "measurements/gpu_step_time.csv";

int64_t integer(const std::string& text) { return std::strtoll(text.c_str(), nullptr, 10); }

// The run's settings in vramplan's vocabulary. "bf16" is pure bf16 (weights, gradients and both
// Adam moments in bf16, no master copy); "amp-bf16" keeps fp32 weights, gradients and moments and
// runs the matmuls in bf16 under autocast. Both accumulate gradients in the parameters' dtype.
Result<json> settings_of(const CsvRow& r) {
  json s = {{"model", r["model"]},
            {"gpu", r["gpu"]},
            {"gpus", 1},
            {"num_layers", integer(r["num_layers"])},
            {"seq_len", integer(r["seq_len"])},
            {"micro_batch", integer(r["micro_batch"])},
            {"global_batch", integer(r["micro_batch"])},
            {"recompute", r["recompute"]},
            {"model_code", r["model_code"]},
            {"fp32_grad_accum", false}};
  if (r["precision"] == "bf16") {
    s.update({{"param_dtype", "bf16"},
              {"grad_dtype", "bf16"},
              {"optimizer_dtype", "bf16"},
              {"master_weights", false}});
  } else if (r["precision"] == "amp-bf16") {
    s.update({{"param_dtype", "fp32"}, {"grad_dtype", "fp32"}, {"optimizer_dtype", "fp32"}});
  } else {
    return Error{"gpu_step_time.precision", r["precision"], "bf16 or amp-bf16", r["id"]};
  }
  return s;
}

PublishedRow predict_row(const CsvRow& r, const StepTimeConstants& constants) {
  PublishedRow row;
  row.id = r["id"];
  row.model = r["model"];
  row.gpu = r["gpu"];
  row.framework = r["model_code"];
  row.precision = r["precision"];
  row.source = r["source"];
  row.gpus = 1;
  row.held_out = true;  // never used to set a constant
  row.measured_tok_s = std::strtod(r["tokens_per_s"].c_str(), nullptr);
  const Gpu* gpu = builtin_gpus().find(r["gpu"]);
  Result<json> settings = settings_of(r);
  Result<ResolvedScenario> layout = settings.ok() ? resolve_scenario(*settings, nullptr)
                                                  : Result<ResolvedScenario>(settings.error());
  if (gpu == nullptr || !layout.ok()) {
    row.skipped = true;
    row.reason = gpu == nullptr ? fmt::format("{} is not in the GPU catalog", r["gpu"])
                                : "layout not accepted: " + layout.error().message();
    return row;
  }
  Result<StepTime> time =
      estimate_step_time(layout->scenario, *gpu, default_cluster(*gpu), constants);
  if (!time.ok() || !(time->tokens_per_s_per_gpu > 0) || !(row.measured_tok_s > 0)) {
    row.skipped = true;
    row.reason = time.ok() ? "no step time" : "no step time: " + time.error().message();
    return row;
  }
  row.predicted = *time;
  row.predicted_tok_s = time->tokens_per_s_per_gpu;
  return row;
}

}  // namespace

Result<PublishedReport> validate_gpu_step_time(const StepTimeConstants& constants) {
  Result<std::vector<CsvRow>> table = parse_csv(embedded_file(kMeasured), "gpu_step_time");
  if (!table) return table.error();
  PublishedReport report;
  std::vector<std::string> gpus;
  for (const CsvRow& r : *table) {
    report.rows.push_back(predict_row(r, constants));
    if (std::find(gpus.begin(), gpus.end(), r["gpu"]) == gpus.end()) gpus.push_back(r["gpu"]);
  }
  auto& out = report.summaries;
  out.push_back(summarise_published(report.rows, "all", [](const PublishedRow&) { return true; }));
  for (const std::string& g : gpus)
    out.push_back(summarise_published(report.rows, "gpu " + g,
                                      [&](const PublishedRow& r) { return r.gpu == g; }));
  return report;
}

}  // namespace vramplan
