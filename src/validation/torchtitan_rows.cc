// torchtitan's published benchmark runs (max reserved over ranks): each row is written back as
// the job config it ran — torchtitan of December 2024, whose TOML spelled the degrees under
// [training] and [experimental] (train_configs/llama3_405b.toml of that time) — and read by the
// torchtitan importer like any user's TOML.
#include <nlohmann/json.hpp>

#include "interop/torchtitan/torchtitan_flavors.h"
#include "interop/torchtitan/torchtitan_import.h"
#include "validation/dataset_rows.h"
#include "vramplan/io/scenario_io.h"

namespace vramplan::dataset_rows {
namespace {

using nlohmann::json;

// What torchtitan's published runs use that vramplan does not model, or "" when the row can be
// predicted. torch.compile and Float8 are predicted as eager bf16 only under full activation
// checkpointing, where they touch only the layer being recomputed (data/measurements/README.md;
// the importer says the same of compile.enable and of torchao's float8 linears).
std::string torchtitan_unmodelled(const CsvRow& r) {
  if (r["compile"] == "true" && r["recompute"] != "full")
    return "torch.compile with " + r["recompute"] +
           " checkpointing fuses element-wise ops and changes what each layer saves; not modelled";
  return "";
}

// The row's job config. local_batch is per data-parallel rank and `microbatches` the pipeline's
// split of it; data_parallel_shard_degree -1 takes the ranks tp·pp·cp leave of the run's GPUs.
Result<json> job_config(const CsvRow& r) {
  const interop::TitanFlavor* flavor = interop::titan_flavor_of_preset(r["model"]);
  if (flavor == nullptr)
    return Error{"model", r["model"], "a model torchtitan has a flavor of", ""};
  const int64_t local_batch = integer_or(r["local_batch"], 1);
  const bool full = r["recompute"] == "full";
  json job = {{"model", {{"name", flavor->model}, {"flavor", flavor->flavor}}},
              {"training",
               {{"batch_size", local_batch},
                {"seq_len", integer_or(r["seq_len"], 0)},
                {"data_parallel_shard_degree", -1},
                {"tensor_parallel_degree", integer_or(r["tp"], 1)},
                {"compile", is_true(r["compile"])}}},
              {"experimental",
               {{"pipeline_parallel_degree", integer_or(r["pp"], 1)},
                {"context_parallel_degree", integer_or(r["cp"], 1)},
                {"enable_async_tensor_parallel", is_true(r["async_tp"])}}},
              {"activation_checkpoint",
               {{"mode", full ? "full" : "selective"},
                {"selective_ac_option", r["recompute"] == "selective-op" ? "op" : "2"}}},
              {"float8",
               {{"enable_float8_linear", is_true(r["float8"])},
                {"enable_fsdp_float8_all_gather", is_true(r["float8"])},
                {"precompute_float8_dynamic_scale_for_fsdp", is_true(r["float8"])}}}};
  if (integer_or(r["pp"], 1) > 1) {
    job["experimental"]["pipeline_parallel_schedule"] =
        r["schedule"] == "interleaved" ? "Interleaved1F1B" : "1F1B";
    job["experimental"]["pipeline_parallel_microbatches"] = integer_or(r["microbatches"], 1);
  }
  return job;
}

Result<Estimate> predict(const CsvRow& r) {
  Result<json> job = job_config(r);
  if (!job) return job.error();
  interop::ImportBuilder out("torchtitan");
  if (auto e = interop::import_torchtitan_document(*job, integer_or(r["gpus"], 1),
                                                   "(the run's GPUs)", out))
    return *e;
  Imported imported = out.finish();
  Result<ResolvedScenario> scenario =
      resolve_scenario(imported.settings, [](const std::string& path) -> Result<std::string> {
        return Error{"model", path, "a preset", "validation reads no files"};
      });
  if (!scenario) return scenario.error();
  return estimate(scenario->scenario, {.explain = false});
}

}  // namespace

// torchtitan's published runs (data/measurements/README.md); the figure is peak reserved, max
// over ranks.
void add_torchtitan_rows(const std::vector<CsvRow>& runs, ValidationReport& report) {
  for (const CsvRow& r : runs) {
    const double measured = number_or(r["reserved_gib"], 0);
    if (const std::string why = torchtitan_unmodelled(r); !why.empty()) {
      report.rows.push_back(
          skipped_row("torchtitan", r["run"], r["model"], "peak reserved", measured, why));
      continue;
    }
    Result<Estimate> est = predict(r);
    if (!est) {
      report.rows.push_back(skipped_row("torchtitan", r["run"], r["model"], "peak reserved",
                                        measured,
                                        "not a valid scenario: " + est.error().message()));
      continue;
    }
    report.rows.push_back({"torchtitan", r["run"], r["model"], "peak reserved", measured,
                           max_reserved_gib(*est), "", false, ""});
  }
}

}  // namespace vramplan::dataset_rows
