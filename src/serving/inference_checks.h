// Checks an InferenceScenario before estimating: layout against the model, sizes, the engines'
// memory fractions, offload and images. Each failure names the field.
#pragma once

#include <cstdint>
#include <optional>

#include "vramplan/base/error.h"
#include "vramplan/serving/inference.h"

namespace vramplan {

// Tokens per sequence: --context, else the model's max_position_embeddings.
int64_t resolved_context(const InferenceScenario& s);

std::optional<Error> validate_inference(const InferenceScenario& s);

}  // namespace vramplan
