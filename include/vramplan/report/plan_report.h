// The planner's answer for users: JSON with stable keys and a terminal table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/plan/planner.h"

namespace vramplan {

// Stable keys: evaluated, candidates[] {layout, parallel, peak {stage, stage_index,
// allocated_bytes, reserved_bytes, device_bytes}, tokens_per_s_per_gpu, mfu, step_time_s,
// step_time {...}, scenario {settings for `vramplan estimate --scenario`}}, families[], why,
// closest_miss, suggestions, stats, limit_bytes, gpu, gpus.
nlohmann::json plan_to_json(const PlanResult& result);

// "tp4 sp pp8 ..." table of the top candidates and the why paragraph, for a terminal.
std::string render_plan(const PlanResult& result);

}  // namespace vramplan
