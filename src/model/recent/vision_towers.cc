#include "model/recent/vision_towers.h"

namespace vramplan::hf {

// Llama4VisionModel: patch_embedding (Linear C·p² -> h, no bias), class_embedding (h),
// positional_embedding_vlm ((image/p)² + 1)·h, layernorm_pre and layernorm_post (LayerNorm,
// 2h each); per layer input/post-attention LayerNorms (2·2h), q/k/v/o with biases and fc1/fc2
// with biases. vision_adapter (Llama4VisionMLP2, after the pixel shuffle): fc1
// intermediate_size -> projector_input_dim and fc2 projector_output_dim -> projector_output_dim,
// no biases. Llama4MultiModalProjector:
// linear_1 vision_output_dim -> h_t (multi_modal_projector_bias; false in the releases).
int64_t llama4_vision(Fields& v, const ModelConfig& text) {
  const int64_t h = v.integer_or("hidden_size", 768), f = v.integer_or("intermediate_size", 3072);
  const int64_t layers = v.integer_or("num_hidden_layers", 34);
  const int64_t patch = v.integer_or("patch_size", 14), image = v.integer_or("image_size", 448);
  const int64_t channels = v.integer_or("num_channels", 3);
  const int64_t in_dim = v.integer_or("projector_input_dim", 4096);
  const int64_t out_dim = v.integer_or("projector_output_dim", 4096);
  const int64_t vision_out = v.integer_or("vision_output_dim", 7680);
  int64_t params = channels * patch * patch * h + h + ((image / patch) * (image / patch) + 1) * h;
  params += 2 * 2 * h;  // layernorm_pre, layernorm_post
  const int64_t layer = 2 * 2 * h + 4 * (h * h + h) + (h * f + f) + (f * h + h);
  params += layers * layer;
  params += f * in_dim + out_dim * out_dim;  // vision_adapter.mlp fc1, fc2
  params += vision_out * text.hidden;        // multi_modal_projector.linear_1
  if (v.boolean("multi_modal_projector_bias", false)) params += text.hidden;
  return params;
}

// MllamaVisionModel: patch_embedding (Conv2d C·p²·h, no bias), class_embedding (h),
// gated_positional_embedding (embedding P·h with P = (image/p)² + 1, a gate, tile_embedding
// (A + 1)·T·P·h for A supported aspect ratios and T = max_num_tiles), pre/post tile positional
// embeddings ((A + 1)·T·h and a gate each), layernorm_pre/post (2h each); num_hidden_layers
// local layers (two LayerNorms, q/k/v/o without bias, fc1/fc2 with bias) and num_global_layers
// gated layers with gate_attn and gate_ffn besides. multi_modal_projector: vision_output_dim ->
// h_t with bias.
int64_t mllama_vision(Fields& v, const ModelConfig& text) {
  const int64_t h = v.integer_or("hidden_size", 1280), f = v.integer_or("intermediate_size", 5120);
  const int64_t local = v.integer_or("num_hidden_layers", 32);
  const int64_t global = v.integer_or("num_global_layers", 8);
  const int64_t patch = v.integer_or("patch_size", 14), image = v.integer_or("image_size", 448);
  const int64_t channels = v.integer_or("num_channels", 3);
  const int64_t tiles = v.integer_or("max_num_tiles", 4);
  const int64_t vision_out = v.integer_or("vision_output_dim", 7680);
  int64_t ratios = 8;  // MllamaVisionConfig's default supported_aspect_ratios
  if (const json* list = v.get("supported_aspect_ratios")) {
    if (!list->is_array() || list->empty()) {
      v.fail({v.field("supported_aspect_ratios"), show(*list), "a list of [w, h] tile counts", ""});
      return 0;
    }
    ratios = static_cast<int64_t>(list->size());
  }
  const int64_t positions = (image / patch) * (image / patch) + 1;
  int64_t params = channels * patch * patch * h + h;
  params += positions * h + 1 + (ratios + 1) * tiles * positions * h;  // gated positional
  params += 2 * ((ratios + 1) * tiles * h + 1);                        // pre/post tile
  params += 2 * 2 * h;                                                 // layernorm_pre/post
  const int64_t layer = 2 * 2 * h + 4 * h * h + (h * f + f) + (f * h + h);
  params += local * layer + global * (layer + 2);
  params += vision_out * text.hidden + text.hidden;
  return params;
}

}  // namespace vramplan::hf
