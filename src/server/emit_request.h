// "emit": "<format>" in the bodies of POST /api/estimate, /api/infer and /api/plan: the run (for a
// plan, its best layout the format can write) as that framework's config or command line, as
// `--emit` prints it, answered as {"config": "<text>", "format": "<format>"} instead of the
// estimate (docs/web-api.md). "emit" is no scenario setting: it is taken out of the body before
// the settings are read.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/api.h"
#include "vramplan/base/error.h"
#include "vramplan/plan/planner.h"

namespace vramplan::server {

// Removes "emit" from `settings`: nullopt when the body has none. Errors name "emit".
Result<std::optional<std::string>> take_emit(nlohmann::json& settings);

// {"config", "format"} (200), or the error naming "emit" (400).
Response emit_response(const Result<std::string>& config, const std::string& format, bool pretty);

// The plan's best-ranked layout the format can write; "note" says when it is not the first.
Response emit_plan_winner(const PlanResult& result, const std::string& format, bool pretty);

}  // namespace vramplan::server
