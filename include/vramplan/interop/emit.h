// Writing a run back in a framework's own words: the scenario as the launch script, config file
// or command line that the framework runs (`--emit`), ready to launch, and read back by --from
// to the same estimate.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "vramplan/base/error.h"
#include "vramplan/interop/import.h"
#include "vramplan/serving/inference.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

struct EmitFormat {
  const char* name;  // "megatron", "torchtitan", ... (--emit)
  ImportKind kind;
  const char* what;  // "a Megatron-LM launch script (torchrun ... pretrain_gpt.py)"
};

// Every format vramplan writes, in --help order.
std::span<const EmitFormat> emit_formats();

// `scenario` (what `settings`, the user's vramplan settings, resolved to) written as `format`.
// Errors name "emit": an unknown format, a serving format for training, or what the format
// cannot express ("Megatron-LM has no sliding-window layers").
Result<std::string> emit_training(const Scenario& scenario, const nlohmann::json& settings,
                                  std::string_view format);
Result<std::string> emit_serving(const InferenceScenario& scenario, const nlohmann::json& settings,
                                 std::string_view format);

}  // namespace vramplan
