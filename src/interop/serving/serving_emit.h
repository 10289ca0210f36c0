// A serving scenario as the launch command of vLLM (`vllm serve MODEL ...`) or SGLang
// (`python3 -m sglang.launch_server ...`), which --from reads back to the same estimate. What the
// engine cannot express is an error naming "emit".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/serving/inference.h"

namespace vramplan::interop {

Result<std::string> emit_vllm(const InferenceScenario& scenario, const nlohmann::json& settings);
Result<std::string> emit_sglang(const InferenceScenario& scenario, const nlohmann::json& settings);

}  // namespace vramplan::interop
