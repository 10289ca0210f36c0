// Size checks shared by the config reader and validate_model (hf_config.h).
#pragma once

#include <optional>

#include "vramplan/base/error.h"
#include "vramplan/model/model.h"

namespace vramplan {

// The sizes alone (no per-layer vectors yet): checked before anything is sized by num_layers.
std::optional<Error> validate_sizes(const ModelConfig& model);

}  // namespace vramplan
