// Vision encoders of Llama 4 and Llama-3.2-Vision, module by module as transformers builds them.
#pragma once

#include <cstdint>

#include "model/config_fields.h"
#include "vramplan/model/model.h"

namespace vramplan::hf {

// Llama4VisionModel + Llama4MultiModalProjector, from vision_config (v) and the text model.
int64_t llama4_vision(Fields& v, const ModelConfig& text);

// MllamaVisionModel + the multi_modal_projector (vision_output_dim -> h_t, with bias).
int64_t mllama_vision(Fields& v, const ModelConfig& text);

}  // namespace vramplan::hf
