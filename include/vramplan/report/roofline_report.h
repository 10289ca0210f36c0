// The roofline and the step time it leads to, for people (table, CSV) and programs (JSON).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/io/roofline_settings.h"
#include "vramplan/perf/roofline.h"
#include "vramplan/perf/step_time.h"

namespace vramplan {

// Stable JSON keys:
// gpu {id, compute_dtype, matmul_tflops, attention_tflops, vector_tflops, hbm_gbps, matmul_ridge,
// attention_ridge, vector_ridge},
// cluster {gpus_per_node, intra_node_gbps, inter_node_gbps}, tokens_per_microbatch,
// sections[] {name, layers, flops, bytes, roofline_s, ops[] {op, kind, pass, formula, flops,
// bytes, intensity, ridge, bound, roofline_s}}, step_time {compute_s, ..., mfu}.
nlohmann::json roofline_to_json(const Roofline& roofline, const StepTime& step,
                                const Cluster& cluster);
// roofline_to_json of a settings request, with warnings[] (the resolving notes the CLI also prints
// to stderr): what `vramplan roofline --format json` prints and POST /api/roofline answers.
nlohmann::json settings_roofline_to_json(const SettingsRoofline& result);
nlohmann::json step_time_to_json(const StepTime& step);
std::string render_roofline_table(const Scenario& s, const Roofline& roofline, const StepTime& step,
                                  const Cluster& cluster);
// One line per operation: section,layers,op,kind,pass,flops,bytes,intensity,ridge,bound,
// roofline_s,formula (RFC 4180 quoting).
std::string render_roofline_csv(const Roofline& roofline);

}  // namespace vramplan
