// Training frameworks differ in what they keep in memory for the same model and layout: fp32
// gradient buffers, DDP bucket copies, how the loss keeps the logits, how layers are split over
// pipeline stages, how much the caching allocator reserves. A framework preset sets those
// conventions (and the training defaults that go with them) before the user's own settings,
// which always win. Each value and its source: docs/frameworks.md.
#pragma once

#include <array>
#include <string_view>

#include "vramplan/training/scenario.h"

namespace vramplan {

enum class Framework { kMegatron, kTorchtitan, kDeepspeed, kNanotron, kHfTrainer };

inline constexpr std::array<const char*, 5> kFrameworkNames = {
    "megatron", "torchtitan", "deepspeed", "nanotron", "hf-trainer"};
inline const char* framework_name(Framework f) { return kFrameworkNames[static_cast<size_t>(f)]; }

// Sets s.conventions, s.overheads and the training/parallel defaults the framework implies.
// Called on a default Scenario before user settings are read.
void apply_framework(Framework framework, Scenario& s);

// Sets s.conventions.model_code and the conventions that follow from the model code
// (gated_mlp_tensors, loss_bytes_per_logit for transformers; docs/frameworks.md, "Model code").
// kDefault leaves the framework's values as they are.
void apply_model_code(ModelCode code, Scenario& s);

}  // namespace vramplan
