// A training scenario as a torchtitan job config TOML (see torchtitan_emit.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan::interop {

Result<std::string> emit_torchtitan(const Scenario& scenario, const nlohmann::json& settings);

}  // namespace vramplan::interop
