#include "validation/validation_modes.h"

#include "vramplan/report/roofline_report.h"
#include "vramplan/validation/validation_json.h"

namespace vramplan {

using nlohmann::json;

json serving_validation_to_json(const ServingValidation& v) {
  json out = {{"rows", json::array()}, {"summaries", json::array()}};
  for (const ServingCheck& c : v.rows)
    out["rows"].push_back({{"id", c.id},
                           {"engine", c.engine},
                           {"version", c.version},
                           {"quantity", c.quantity},
                           {"unit", c.unit},
                           {"published", c.published},
                           {"predicted", c.predicted},
                           {"error_pct", c.error_pct()},
                           {"source", c.source},
                           {"note", c.note}});
  for (const ServingSummary& s : v.summaries)
    out["summaries"].push_back({{"quantity", s.quantity},
                                {"rows", s.rows},
                                {"median_abs_pct", s.median_abs_pct},
                                {"max_abs_pct", s.max_abs_pct}});
  return out;
}

json step_time_constants_to_json(const StepTimeConstants& c) {
  return {{"matmul_efficiency", c.matmul_efficiency},
          {"attention_efficiency", c.attention_efficiency},
          {"hbm_efficiency", c.hbm_efficiency},
          {"optimizer_hbm_efficiency", c.optimizer_hbm_efficiency},
          {"kernel_overhead_s", c.kernel_overhead_s},
          {"cpu_overhead_s", c.cpu_overhead_s},
          {"collective_overhead_s", c.collective_overhead_s},
          {"intra_bw_efficiency", c.intra_bw_efficiency},
          {"inter_bw_efficiency", c.inter_bw_efficiency},
          {"intra_latency_s", c.intra_latency_s},
          {"inter_latency_s", c.inter_latency_s},
          {"inter_p2p_latency_s", c.inter_p2p_latency_s}};
}

json published_report_to_json(const PublishedReport& report) {
  json out = {{"rows", json::array()}, {"summaries", json::array()}};
  for (const PublishedRow& r : report.rows) {
    json row = {{"id", r.id},
                {"model", r.model},
                {"gpu", r.gpu},
                {"gpus", r.gpus},
                {"framework", r.framework},
                {"precision", r.precision},
                {"held_out", r.held_out},
                {"measured_tok_s_gpu", r.measured_tok_s},
                {"skipped", r.skipped},
                {"reason", r.reason},
                {"notes", r.notes},
                {"source", r.source}};
    if (!r.skipped) {
      row["predicted_tok_s_gpu"] = r.predicted_tok_s;
      row["tok_error_pct"] = r.error_pct();
      row["step_time"] = step_time_to_json(r.predicted);
    }
    out["rows"].push_back(row);
  }
  for (const PublishedSummary& s : report.summaries)
    out["summaries"].push_back({{"group", s.group},
                                {"rows", s.rows},
                                {"skipped", s.skipped},
                                {"median_abs_tok_pct", s.median_abs_pct},
                                {"p90_abs_tok_pct", s.p90_abs_pct},
                                {"bias_tok_pct", s.bias_pct},
                                {"spearman_tok", s.spearman}});
  const auto floor_json = [](const NoiseFloor& f) {
    return json{{"groups", f.groups},
                {"rows", f.rows},
                {"median_abs_pct", f.median_abs_pct},
                {"p90_abs_pct", f.p90_abs_pct}};
  };
  out["release_floor"] = floor_json(report.release_floor);
  out["held_out_release_floor"] = floor_json(report.held_out_release_floor);
  return out;
}

json throughput_report_to_json(const ThroughputReport& report) {
  json out;
  out["constants"] = step_time_constants_to_json(report.constants);
  out["rows"] = json::array();
  for (const ThroughputRow& r : report.rows) {
    json row = {{"id", r.id},
                {"model", r.model},
                {"gpus", r.gpus},
                {"skipped", r.skipped},
                {"reason", r.reason},
                {"measured_tok_s_gpu", r.measured_tok_s},
                {"measured_mfu_pct", r.measured_mfu_pct}};
    if (!r.skipped) {
      row["predicted_tok_s_gpu"] = r.predicted_tok_s;
      row["predicted_mfu_pct"] = r.predicted_mfu_pct;
      row["tok_error_pct"] = r.tok_error_pct();
      row["mfu_error_pct"] = r.mfu_error_pct();
      row["step_time"] = step_time_to_json(r.predicted);
    }
    out["rows"].push_back(row);
  }
  for (const ThroughputSummary& s : report.summaries)
    out["summaries"].push_back({{"model", s.model},
                                {"fitted", s.fitted},
                                {"rows", s.rows},
                                {"skipped", s.skipped},
                                {"median_abs_tok_pct", s.median_abs_tok_pct},
                                {"p90_abs_tok_pct", s.p90_abs_tok_pct},
                                {"bias_tok_pct", s.bias_tok_pct},
                                {"median_abs_mfu_pct", s.median_abs_mfu_pct},
                                {"spearman_tok", s.spearman_tok},
                                {"spearman_mfu", s.spearman_mfu}});
  out["group_rankings"] = json::array();
  for (const GroupRanking& g : report.group_rankings)
    out["group_rankings"].push_back({{"model", g.model},
                                     {"gpus", g.gpus},
                                     {"rows", g.rows},
                                     {"spearman_tok", g.spearman_tok},
                                     {"twin_pairs", g.twin_pairs},
                                     {"twin_spearman_tok", g.twin_spearman}});
  for (const AccuracyTarget& t : report.targets) {
    json target = {{"name", t.name},       {"value", t.value}, {"target", t.target},
                   {"at_most", t.at_most}, {"met", t.met()},   {"open", t.open()},
                   {"passes", t.passes()}};
    if (t.open()) target["committed"] = t.committed;
    out["targets"].push_back(target);
  }
  out["published"] = published_report_to_json(report.published);
  out["gpu_measured"] = published_report_to_json(report.gpu_measured);
  return out;
}

MemoryGate memory_gate(const ValidationReport& report, const std::string& only) {
  MemoryGate gate;
  for (const AccuracyTarget& t : report.targets) {
    if (!target_shown(t, only)) continue;
    gate.failed += !t.passes();
    gate.open += t.passes() && !t.met();
  }
  return gate;
}

int throughput_targets_missed(const ThroughputReport& report) {
  int missed = 0;
  // Open targets (not met yet) miss only when they get worse than their committed figure.
  for (const AccuracyTarget& t : report.targets) missed += !t.passes();
  return missed;
}

}  // namespace vramplan
