// A training scenario as a torchtune recipe config (see torchtune_emit.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan::interop::torchtune {

Result<std::string> emit_torchtune(const Scenario& scenario, const nlohmann::json& settings);

}  // namespace vramplan::interop::torchtune
