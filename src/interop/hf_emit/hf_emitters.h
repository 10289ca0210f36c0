// The Hugging Face stack's writers as emitters.cc lists them (see deepspeed_emit.cc,
// accelerate_emit.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan::interop::hf_emit {

Result<std::string> emit_deepspeed(const Scenario& scenario, const nlohmann::json& settings);
Result<std::string> emit_accelerate(const Scenario& scenario, const nlohmann::json& settings);

}  // namespace vramplan::interop::hf_emit
