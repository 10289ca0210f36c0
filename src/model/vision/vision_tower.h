// Vision towers of multimodal checkpoints: their parameters, module by module as transformers
// builds them, so that the checkpoint's total includes them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/model/model.h"
#include "vramplan/model/vision_shape.h"

namespace vramplan::hf {

struct VisionTower {
  int64_t params = 0;  // encoder + projector into the language model
  VisionShape shape;   // for --images: the processor's tiling and the encoder's layers
  std::string note;    // what was (not) counted, for the parse warnings
};

// SigLIP (gemma3), Pixtral (mistral3), the Qwen2.5-VL ViT, Llama 4's and Llama-3.2-Vision's
// encoders are counted exactly; other wrappers
// give 0 with a note saying the tower is not counted.
Result<VisionTower> read_vision_tower(const nlohmann::json& root, const ModelConfig& text);

}  // namespace vramplan::hf
