// The estimate as JSON with stable keys (docs/cli.md lists them).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/estimate_text.h"
#include "report/scenario_json.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/report/report.h"

namespace vramplan {
namespace {

using estimate_text::peak_stage;
using nlohmann::json;
using report_json::parameters_json;
using report_json::scenario_json;

json phases_json(const StageEstimate& stage) {
  json phases = json::array();
  for (const Phase& p : stage.phases)
    phases.push_back({{"name", p.name}, {"allocated_bytes", p.allocated_bytes}});
  return phases;
}

json stage_json(const StageEstimate& stage) {
  json rows = json::array();
  for (const Row& r : stage.rows) {
    rows.push_back({{"component", r.component},
                    {"bytes", r.bytes},
                    {"counts_toward", counts_toward_name(r.counts_toward)},
                    {"bytes_low", r.bytes_low},
                    {"bytes_high", r.bytes_high},
                    {"formula", r.formula},
                    {"source", r.source}});
  }
  return {{"name", stage.name},
          {"ranks", stage.ranks},
          {"layers", stage.layers},
          {"layer_ids", stage.layer_ids},
          {"in_flight_microbatches", stage.in_flight_microbatches},
          {"rows", std::move(rows)},
          {"allocated_bytes", stage.allocated_bytes},
          {"reserved_bytes", stage.reserved_bytes},
          {"device_bytes", stage.device_bytes},
          {"allocated_bytes_low", stage.allocated_bytes_low},
          {"allocated_bytes_high", stage.allocated_bytes_high},
          {"reserved_bytes_low", stage.reserved_bytes_low},
          {"reserved_bytes_high", stage.reserved_bytes_high},
          {"device_bytes_low", stage.device_bytes_low},
          {"device_bytes_high", stage.device_bytes_high},
          {"host_bytes", stage.host_bytes},
          {"disk_bytes", stage.disk_bytes},
          {"phases", phases_json(stage)},
          {"peak_phase", stage.peak_phase}};
}

json peak_object(const Estimate& e) {
  const StageEstimate* stage = peak_stage(e);
  return {{"stage", stage ? stage->name : std::string()},
          {"stage_index", e.peak.stage},
          {"phase", stage ? stage->peak_phase : std::string()},
          {"allocated_bytes", e.peak.allocated_bytes},
          {"reserved_bytes", e.peak.reserved_bytes},
          {"device_bytes", e.peak.device_bytes},
          {"allocated_bytes_low", e.peak.allocated_bytes_low},
          {"allocated_bytes_high", e.peak.allocated_bytes_high},
          {"reserved_bytes_low", e.peak.reserved_bytes_low},
          {"reserved_bytes_high", e.peak.reserved_bytes_high},
          {"device_bytes_low", e.peak.device_bytes_low},
          {"device_bytes_high", e.peak.device_bytes_high},
          {"host_bytes", e.peak.host_bytes},
          {"disk_bytes", e.peak.disk_bytes}};
}

}  // namespace

json fit_json(const Fit& f) {
  return {{"gpu", f.gpu},
          {"name", f.name},
          {"nominal_bytes", f.nominal_bytes},
          {"usable_bytes", f.usable_bytes},
          {"used_fraction", f.used_fraction},
          {"verdict", verdict_name(f.verdict)},
          {"host", f.host_checked ? json{{"gpus_per_node", f.gpus_per_node},
                                         {"node_bytes", f.host_node_bytes},
                                         {"memory_bytes", f.host_memory_bytes},
                                         {"used_fraction", f.host_used_fraction},
                                         {"verdict", verdict_name(f.host_verdict)}}
                                  : json(nullptr)}};
}

json peak_json(const Estimate& estimate) { return peak_object(estimate); }

const std::vector<std::string>& estimate_json_keys() {
  // In the order the JSON object keeps them (nlohmann::json sorts an object's keys).
  static const std::vector<std::string> keys = {
      "fit", "microbatches", "parameters", "peak", "scenario", "stages", "warnings", "world_size"};
  return keys;
}

json estimate_json_part(const Scenario& scenario, const Estimate& estimate, std::string_view key) {
  if (key == "fit") {
    json fit = json::array();
    for (const Fit& f : estimate.fit) fit.push_back(fit_json(f));
    return fit;
  }
  if (key == "microbatches") return estimate.microbatches;
  if (key == "parameters") return parameters_json(estimate.parameters);
  if (key == "peak") return peak_object(estimate);
  if (key == "scenario") return scenario_json(scenario, &estimate.parameters);
  if (key == "stages") {
    json stages = json::array();
    for (const StageEstimate& stage : estimate.stages) stages.push_back(stage_json(stage));
    return stages;
  }
  if (key == "warnings") return estimate.warnings;
  if (key == "world_size") return estimate.world_size;
  return nullptr;
}

nlohmann::json estimate_to_json(const Scenario& scenario, const Estimate& estimate) {
  json out = json::object();
  for (const std::string& key : estimate_json_keys())
    out[key] = estimate_json_part(scenario, estimate, key);
  return out;
}

}  // namespace vramplan
