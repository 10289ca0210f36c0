// What a scenario must be for torchtitan to run it as vramplan estimated it: a model one of
// torchtitan's flavors builds, and torchtitan's conventions. Each refusal is an error naming
// "emit" (see torchtitan_emit.cc).
#pragma once

#include <optional>

#include "interop/torchtitan/torchtitan_flavors.h"
#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan::interop {

inline constexpr const char* kTitanFormat = "torchtitan";

// The first flavor (in table order) whose model is `model`, or nullptr.
const TitanFlavor* titan_flavor_of_model(const ModelConfig& model);

// The scenario follows torchtitan's conventions (--framework torchtitan, none of them changed),
// trains a whole model with AdamW, without what torchtitan has no switch for (fp8 of Transformer
// Engine, dropout, unfused attention, CUDA graphs, ZeRO stages, the distributed optimizer).
std::optional<Error> refuse_for_torchtitan(const Scenario& s);

}  // namespace vramplan::interop
