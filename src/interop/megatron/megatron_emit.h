// A training scenario as a Megatron-LM launch script (see megatron_emit.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan::interop {

Result<std::string> emit_megatron(const Scenario& scenario, const nlohmann::json& settings);

}  // namespace vramplan::interop
