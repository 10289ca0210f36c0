// POST /api/sweep: one scenario setting varied over a list or a range of values, the peak memory
// per value. Pure: the request JSON in, the answer JSON out.
//
//   {"scenario": {...settings...}, "vary": "seq_len", "values": [1024, 2048, 4096]}
//   {"scenario": {...}, "vary": "seq_len", "from": 1024, "to": 32768, "step": 1024}
//   {"scenario": {...}, "vary": "seq_len", "from": 1024, "to": 131072, "multiply": 2}
//
// Answer: {"vary", "count", "errors", "points": [{"value", "peak": {stage, stage_index,
// allocated_bytes, reserved_bytes, device_bytes}, "world_size", "microbatches", "fit": {the
// chosen GPU's row}}, or {"value", "error": {...}} where that value is invalid]}.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/io/scenario_io.h"

namespace vramplan::server {

// More points than this are refused (400) before any is computed.
inline constexpr size_t kMaxSweepPoints = 10000;

struct SweepRequest {
  nlohmann::json scenario;  // the settings every point shares
  std::string vary;         // a scenario key, e.g. "seq_len"
  std::vector<nlohmann::json> values;
};

// Checks the request's shape (keys, the setting to vary, the range and its size); errors name
// the request field at fault ("vary", "values", "from", "to", "step", "multiply", ...).
Result<SweepRequest> parse_sweep_request(const nlohmann::json& body);

// Every point, in order; a value the scenario rejects gets its error instead of a peak.
nlohmann::json run_sweep(const SweepRequest& request, const FileReader& read_file);

}  // namespace vramplan::server
