// Vision encoders of Llama 4, Llama-3.2-Vision, LLaVA-NeXT and Qwen3-VL, module by module as
// transformers builds them.
#pragma once

#include <cstdint>

#include "model/config_fields.h"
#include "vramplan/model/model.h"
#include "vramplan/model/vision_shape.h"

namespace vramplan::hf {

// One pre-norm ViT encoder layer with biases everywhere (SigLIP, CLIP, Llama 4's vision model):
// two LayerNorms (2·2h), q/k/v/o projections (4·(h² + h)), fc1 and fc2 (h·f + f, f·h + h).
inline int64_t biased_vit_layer(int64_t h, int64_t f) {
  return 2 * 2 * h + 4 * (h * h + h) + (h * f + f) + (f * h + h);
}

// The encoder's part of a VisionShape: its tiling, the processor the token counts follow, and
// the layers (a LayerNorm + GELU MLP ViT unless the caller says otherwise).
inline void set_encoder(VisionShape& s, ImageTiling tiling, const char* processor, int64_t layers,
                        int64_t h, int64_t heads, int64_t f, int64_t patch,
                        const ModelConfig& text) {
  s.tiling = tiling;
  s.processor = processor;
  s.layers = layers;
  s.hidden = h;
  s.heads = heads;
  s.ffn = f;
  s.patch = patch;
  s.text_hidden = text.hidden;
}

// Llama4VisionModel + Llama4MultiModalProjector, from vision_config (v) and the text model.
int64_t llama4_vision(Fields& v, const ModelConfig& text, VisionShape& shape);

// MllamaVisionModel + the multi_modal_projector (vision_output_dim -> h_t, with bias).
int64_t mllama_vision(Fields& v, const ModelConfig& text, VisionShape& shape);

// LLaVA-NeXT: CLIPVisionModel + LlavaNextMultiModalProjector (linear_1, linear_2) +
// image_newline; `top` is the wrapper config (vision_feature_layer, multimodal_projector_bias).
int64_t llava_next_vision(Fields& v, Fields& top, const ModelConfig& text, VisionShape& shape);

// Qwen3-VL (and Qwen3-VL-MoE): Qwen3VLVisionModel with its merger and DeepStack mergers.
int64_t qwen3_vl_vision(Fields& v, const ModelConfig& text, VisionShape& shape);

}  // namespace vramplan::hf
