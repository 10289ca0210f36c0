// torchtitan's published benchmark runs (max reserved over ranks).
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "validation/dataset_rows.h"
#include "validation/ultrascale.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::dataset_rows {
namespace {

// What torchtitan's published runs use that vramplan does not model, or "" when the row can be
// predicted. torch.compile and Float8 are predicted as eager bf16 only under full activation
// checkpointing, where they touch only the layer being recomputed (data/measurements/README.md).
std::string torchtitan_unmodelled(const CsvRow& r) {
  if (r["compile"] == "true" && r["recompute"] != "full")
    return "torch.compile with " + r["recompute"] +
           " checkpointing fuses element-wise ops and changes what each layer saves; not modelled";
  return "";
}

}  // namespace

// torchtitan's published runs (data/measurements/README.md): the page's settings through the
// same reader as the CLI, with torchtitan's conventions; the figure is peak reserved, max over
// ranks.
void add_torchtitan_rows(const std::vector<CsvRow>& runs, ValidationReport& report) {
  for (const CsvRow& r : runs) {
    const double measured = number_or(r["reserved_gib"], 0);
    if (const std::string why = torchtitan_unmodelled(r); !why.empty()) {
      report.rows.push_back(
          skipped_row("torchtitan", r["run"], r["model"], "peak reserved", measured, why));
      continue;
    }
    // local_batch is per data-parallel rank; the microbatches split it (pipeline schedules).
    // torchtitan's interleaved schedule puts two stages on each rank. Its split, the framework's
    // default, counts the embedding and the norm + output as one layer each and gives the
    // remainder to the first stages (generate_llm_fqn_per_model_part, input and output weight 1;
    // for the 405B the generate_split_points of the page's time gives the same 15, 16 × 6, 15 and
    // 7, 8 × 14, 7).
    const int64_t microbatches = integer_or(r["microbatches"], 1);
    const int64_t micro_batch = integer_or(r["local_batch"], 1) / microbatches;
    const int64_t dp = integer_or(r["gpus"], 1) /
                       (integer_or(r["tp"], 1) * integer_or(r["pp"], 1) * integer_or(r["cp"], 1));
    const nlohmann::json settings = {{"model", r["model"]},
                                     {"framework", "torchtitan"},
                                     {"gpus", integer_or(r["gpus"], 1)},
                                     {"tp", integer_or(r["tp"], 1)},
                                     {"cp", integer_or(r["cp"], 1)},
                                     {"pp", integer_or(r["pp"], 1)},
                                     {"vpp", r["schedule"] == "interleaved" ? 2 : 1},
                                     {"micro_batch", micro_batch},
                                     {"global_batch", micro_batch * microbatches * dp},
                                     {"seq_len", integer_or(r["seq_len"], 0)},
                                     {"recompute", r["recompute"]}};
    Result<ResolvedScenario> scenario =
        resolve_scenario(settings, [](const std::string& path) -> Result<std::string> {
          return Error{"model", path, "a preset", "validation reads no files"};
        });
    Result<Estimate> est = scenario ? estimate(scenario->scenario, {.explain = false})
                                    : Result<Estimate>(scenario.error());
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
