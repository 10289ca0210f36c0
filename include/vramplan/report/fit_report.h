// The "what fits" answers for users: JSON with stable keys and a short text for a terminal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/plan/fit_search.h"

namespace vramplan {

// Stable keys: question, model, gpu {id, name, usable_bytes}, headroom, limit_bytes, fits, value
// (null when nothing fits), unbounded, step, up_to, bounded_by, at, next (each null or {value,
// fits, allocated_bytes, reserved_bytes, device_bytes, host_bytes, peak_stage, micro_batch,
// microbatches, global_batch, seq_len, in_flight_microbatches, invalid}), miss_bytes, limiting,
// note, evaluated, seconds, scenario (settings for `vramplan estimate --scenario`; null when
// nothing fits), micro_batch, microbatches; the GPU-count question adds layout, layouts, counts[]
// {gpus, fits, layouts, layout, device_bytes, reason} and plan (plan_to_json at the answer).
nlohmann::json fit_to_json(const FitAnswer& answer);
// The answer, the first value that does not fit, why, and how to reproduce it, for a terminal.
std::string render_fit(const FitAnswer& answer);

}  // namespace vramplan
