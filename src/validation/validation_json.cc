// The memory validation as JSON (`vramplan validate --format json`, vramplan.validate() in
// Python): rows, summaries, fit confusion, targets, parameter counts and the noise floor, for
// every dataset or one.
#include "vramplan/validation/validation_json.h"

#include <string>
#include <vector>

namespace vramplan {

// The datasets `--dataset` accepts.
const std::vector<std::string>& validation_datasets() {
  static const std::vector<std::string> kNames = {"megatron", "ultrascale", "torchtitan",
                                                  "pytorch-reference", "gpu-measured"};
  return kNames;
}

// Whether a row or summary of `dataset` is shown under --dataset `only` (ultrascale brings its
// crashed runs along).
bool dataset_shown(const std::string& dataset, const std::string& only) {
  return only.empty() || dataset == only ||
         (only == "ultrascale" && dataset == "ultrascale-crashed");
}

bool target_shown(const AccuracyTarget& t, const std::string& only) {
  if (only.empty()) return true;
  const std::string prefix = only == "megatron"       ? "Megatron"
                             : only == "ultrascale"   ? "Ultra-Scale"
                             : only == "torchtitan"   ? "torchtitan"
                             : only == "gpu-measured" ? "GPU-measured"
                                                      : "PyTorch reference";
  return t.name.rfind(prefix, 0) == 0;
}

nlohmann::json validation_to_json(const ValidationReport& report, const std::string& only) {
  nlohmann::json out;
  out["rows"] = nlohmann::json::array();
  for (const ValidationRow& r : report.rows) {
    if (!dataset_shown(r.dataset, only)) continue;
    nlohmann::json row = {{"dataset", r.dataset},
                          {"id", r.id},
                          {"group", r.group},
                          {"quantity", r.quantity},
                          {"skipped", r.skipped},
                          {"reason", r.reason},
                          {"measured_gib", r.measured_gib},
                          {"predicted_gib", r.predicted_gib},
                          {"verdict", r.verdict}};
    if (!r.skipped && (r.measured_gib > 0 || r.basis_gib > 0)) row["error_pct"] = r.error_pct();
    if (r.basis_gib > 0) row["error_basis_gib"] = r.basis_gib;
    if (!r.facets.empty()) row["facets"] = r.facets;
    out["rows"].push_back(row);
  }
  out["summaries"] = nlohmann::json::array();
  for (const DatasetSummary& s : report.summaries) {
    if (!dataset_shown(s.dataset, only)) continue;
    out["summaries"].push_back({{"dataset", s.dataset},
                                {"quantity", s.quantity},
                                {"rows", s.rows},
                                {"skipped", s.skipped},
                                {"median_abs_pct", s.median_abs_pct},
                                {"p90_abs_pct", s.p90_abs_pct},
                                {"bias_pct", s.bias_pct}});
  }
  const FitConfusion& f = report.fit;
  out["fit_confusion"] = {
      {"ran", {{"fits", f.ran_fits}, {"tight", f.ran_tight}, {"oom", f.ran_oom}}},
      {"crashed", {{"fits", f.crashed_fits}, {"tight", f.crashed_tight}, {"oom", f.crashed_oom}}}};
  out["targets"] = nlohmann::json::array();
  for (const AccuracyTarget& t : report.targets) {
    if (!target_shown(t, only)) continue;
    nlohmann::json target = {{"name", t.name},       {"value", t.value}, {"target", t.target},
                             {"at_most", t.at_most}, {"met", t.met()},   {"open", t.open()},
                             {"passes", t.passes()}};
    if (t.open()) target["committed"] = t.committed;
    out["targets"].push_back(target);
  }
  if (only.empty() || only == "pytorch-reference") {
    out["parameter_counts"] = nlohmann::json::array();
    for (const ParameterCountCheck& c : report.parameter_counts)
      out["parameter_counts"].push_back({{"preset", c.preset},
                                         {"part", c.part},
                                         {"reference", c.reference},
                                         {"vramplan", c.vramplan},
                                         {"matches", c.matches()}});
  }
  const NoiseFloor& n = report.ultrascale_noise;
  out["ultrascale_noise_floor"] = {{"groups", n.groups},
                                   {"rows", n.rows},
                                   {"median_abs_pct", n.median_abs_pct},
                                   {"p90_abs_pct", n.p90_abs_pct}};
  return out;
}

}  // namespace vramplan
