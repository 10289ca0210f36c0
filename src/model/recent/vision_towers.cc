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
  params += layers * biased_vit_layer(h, f);
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

// CLIPVisionTransformer: class_embedding (h), patch_embedding (Conv2d C·p²·h, no bias),
// position_embedding ((image/p)² + 1)·h, pre_layrnorm and post_layernorm (2h each); per layer
// two LayerNorms, q/k/v/out_proj with biases, fc1/fc2 with biases. LLaVA's defaults (the
// LlavaNextConfig vision_config) where a key is absent. The projector's linear_1 reads h_v per
// vision_feature_layer (an int or a list), both linears biased by multimodal_projector_bias
// (default true); image_newline holds h_t.
int64_t llava_next_vision(Fields& v, Fields& top, const ModelConfig& text) {
  const int64_t h = v.integer_or("hidden_size", 1024), f = v.integer_or("intermediate_size", 4096);
  const int64_t layers = v.integer_or("num_hidden_layers", 24);
  const int64_t patch = v.integer_or("patch_size", 14), image = v.integer_or("image_size", 336);
  const int64_t channels = v.integer_or("num_channels", 3);
  int64_t params = h + channels * patch * patch * h + ((image / patch) * (image / patch) + 1) * h;
  params += 2 * 2 * h;  // pre_layrnorm, post_layernorm
  params += layers * biased_vit_layer(h, f);
  int64_t feature_layers = 1;
  if (const json* layer = top.get("vision_feature_layer"); layer != nullptr && layer->is_array())
    feature_layers = static_cast<int64_t>(layer->size());
  const bool bias = top.boolean("multimodal_projector_bias", true);
  params += h * feature_layers * text.hidden + text.hidden * text.hidden;
  if (bias) params += 2 * text.hidden;
  return params + text.hidden;  // image_newline
}

// Qwen3VLVisionModel: patch_embed (Conv3d C·t·p²·h with bias), pos_embed
// (num_position_embeddings·h); per block norm1/norm2 (LayerNorm), qkv (h -> 3h) and proj with
// biases, linear_fc1/fc2 with biases. The merger: LayerNorm over h, fc1 w -> w and fc2
// w -> out_hidden_size with biases (w = h·m²); each DeepStack merger the same with its LayerNorm
// over w.
int64_t qwen3_vl_vision(Fields& v, const ModelConfig& text) {
  const int64_t h = v.integer_or("hidden_size", 1152), f = v.integer_or("intermediate_size", 4304);
  const int64_t depth = v.integer_or("depth", 27), patch = v.integer_or("patch_size", 16);
  const int64_t channels = v.integer_or("in_channels", 3);
  const int64_t temporal = v.integer_or("temporal_patch_size", 2);
  const int64_t merge = v.integer_or("spatial_merge_size", 2);
  const int64_t out = v.integer_or("out_hidden_size", text.hidden);
  const int64_t positions = v.integer_or("num_position_embeddings", 2304);
  int64_t deepstack = 3;  // Qwen3VLVisionConfig's deepstack_visual_indexes (8, 16, 24)
  if (const json* list = v.get("deepstack_visual_indexes")) {
    if (!list->is_array()) {
      v.fail({v.field("deepstack_visual_indexes"), show(*list), "a list of block indices", ""});
      return 0;
    }
    deepstack = static_cast<int64_t>(list->size());
  }
  int64_t params = channels * temporal * patch * patch * h + h + positions * h;
  params += depth * (2 * 2 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * f + f) + (f * h + h));
  const int64_t wide = h * merge * merge;
  const int64_t mlp = (wide * wide + wide) + (wide * out + out);
  params += 2 * h + mlp;                   // merger
  params += deepstack * (2 * wide + mlp);  // deepstack_merger_list
  return params;
}

}  // namespace vramplan::hf
