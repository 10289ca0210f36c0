// The formats vramplan writes and each one's writer (emitters.cc lists them; each format's own
// file holds its writer).
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/interop/emit.h"

namespace vramplan::interop {

struct EmitHandler {
  EmitFormat format;
  // Exactly one is set, by the format's kind.
  Result<std::string> (*training)(const Scenario& scenario, const nlohmann::json& settings);
  Result<std::string> (*serving)(const InferenceScenario& scenario, const nlohmann::json& settings);
};

std::span<const EmitHandler> emit_handlers();

// An error naming "emit": the format cannot express part of the scenario.
Error cannot_emit(const std::string& format, const std::string& what, const std::string& instead);

// The Hub id of the preset `settings["model"]` names, or "" when the model is no preset.
std::string preset_hub_id(const nlohmann::json& settings);

}  // namespace vramplan::interop
