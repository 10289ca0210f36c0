// Renders an Estimate for people (table with a terminal bar chart, markdown) and programs
// (JSON with stable keys, CSV). Pure: returns strings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/training/estimate.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// Stable keys: parameters.{total,active,...}; stages[] {name, ranks, layers, layer_ids, rows[]
// {component, bytes, counts_toward, formula, source}, allocated_bytes, reserved_bytes,
// device_bytes}; peak {stage, allocated_bytes, reserved_bytes, device_bytes}; fit[] {gpu, name,
// usable_bytes, used_fraction, verdict}; warnings[]; scenario {...the resolved inputs}.
nlohmann::json estimate_to_json(const Scenario& scenario, const Estimate& estimate);
// Its top-level keys in the object's order, and one key's value alone (null for another key),
// built without the rest: the Python package reads an answer's parts on demand.
const std::vector<std::string>& estimate_json_keys();
nlohmann::json estimate_json_part(const Scenario& scenario, const Estimate& estimate,
                                  std::string_view key);
// Its "peak" object alone (the sweep endpoint returns it per point).
nlohmann::json peak_json(const Estimate& estimate);
// One fit row as the estimate's JSON writes it (fit[]): the GPU, its verdict and the host check.
nlohmann::json fit_json(const Fit& fit);

struct TableOptions {
  int width = 100;     // terminal columns for the bar chart
  bool color = false;  // ANSI colours
};
std::string render_table(const Scenario& scenario, const Estimate& estimate,
                         const TableOptions& options = {});
std::string render_markdown(const Scenario& scenario, const Estimate& estimate);
// One line per row: stage,component,bytes,gib,counts_toward,formula,source (RFC 4180 quoting).
std::string render_csv(const Estimate& estimate);

// 1.50 GiB, 512.0 MiB, 12 B: human-readable binary units.
std::string format_bytes(int64_t bytes);

}  // namespace vramplan
