#include "model/vision/recent_towers.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>
#include <vector>

namespace vramplan::hf {
namespace {

// Llama 4's pixel shuffle keeps 1/ratio² of the patches: a merge of 1/ratio per side.
int64_t pixel_shuffle_merge(Fields& v) {
  const json* ratio = v.get("pixel_shuffle_ratio");
  if (ratio == nullptr) return 2;
  if (!ratio->is_number() || ratio->get<double>() <= 0 || ratio->get<double>() > 1) {
    v.fail({v.field("pixel_shuffle_ratio"), show(*ratio), "a number in (0, 1], such as 0.5", ""});
    return 1;
  }
  const double per_side = 1 / ratio->get<double>();
  if (per_side != std::floor(per_side)) {
    v.fail(
        {v.field("pixel_shuffle_ratio"), show(*ratio), "1 over a whole number, such as 0.5", ""});
    return 1;
  }
  return static_cast<int64_t>(per_side);
}

// LlavaNextConfig's image_grid_pinpoints ([[h, w], ...]; its default when absent).
std::vector<std::pair<int64_t, int64_t>> grid_pinpoints(Fields& top) {
  std::vector<std::pair<int64_t, int64_t>> points = {
      {336, 672}, {672, 336}, {672, 672}, {1008, 336}, {336, 1008}};
  const json* list = top.get("image_grid_pinpoints");
  if (list == nullptr) return points;
  const Error bad{top.field("image_grid_pinpoints"), show(*list),
                  "a non-empty list of [height, width] pairs of positive pixel counts", ""};
  if (!list->is_array() || list->empty()) {
    top.fail(bad);
    return points;
  }
  points.clear();
  for (const json& p : *list) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer() ||
        p[0].get<int64_t>() < 1 || p[1].get<int64_t>() < 1 || p[0].get<int64_t>() > (1 << 16) ||
        p[1].get<int64_t>() > (1 << 16)) {
      top.fail(bad);
      return {{336, 336}};
    }
    points.emplace_back(p[0].get<int64_t>(), p[1].get<int64_t>());
  }
  return points;
}

}  // namespace

// Llama4VisionModel: patch_embedding (Linear C·p² -> h, no bias), class_embedding (h),
// positional_embedding_vlm ((image/p)² + 1)·h, layernorm_pre and layernorm_post (LayerNorm,
// 2h each); per layer input/post-attention LayerNorms (2·2h), q/k/v/o with biases and fc1/fc2
// with biases. vision_adapter (Llama4VisionMLP2, after the pixel shuffle): fc1
// intermediate_size -> projector_input_dim and fc2 projector_output_dim -> projector_output_dim,
// no biases. Llama4MultiModalProjector:
// linear_1 vision_output_dim -> h_t (multi_modal_projector_bias; false in the releases).
int64_t llama4_vision(Fields& v, const ModelConfig& text, VisionShape& shape) {
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
  // Llama4ImageProcessorFast: tiles of image_size px, at most 16 (max_patches) plus a global
  // tile; Llama4Processor._prompt_split_image: each tile's patches after the pixel shuffle and a
  // separator, then <|image|>, the global tile's patches, <|image_start|>/<|image_end|>.
  set_encoder(shape, ImageTiling::kTiles, "Llama4ImageProcessor", layers, h,
              v.integer_or("num_attention_heads", 16), f, patch, text);
  shape.image_size = image;
  shape.merge = pixel_shuffle_merge(v);
  shape.class_token = true;
  shape.max_tiles = 16;
  shape.global_tile = true;
  shape.separator_tokens = true;
  shape.marker_tokens = 3;
  return params;
}

// MllamaVisionModel: patch_embedding (Conv2d C·p²·h, no bias), class_embedding (h),
// gated_positional_embedding (embedding P·h with P = (image/p)² + 1, a gate, tile_embedding
// (A + 1)·T·P·h for A supported aspect ratios and T = max_num_tiles), pre/post tile positional
// embeddings ((A + 1)·T·h and a gate each), layernorm_pre/post (2h each); num_hidden_layers
// local layers (two LayerNorms, q/k/v/o without bias, fc1/fc2 with bias) and num_global_layers
// gated layers with gate_attn and gate_ffn besides. multi_modal_projector: vision_output_dim ->
// h_t with bias.
int64_t mllama_vision(Fields& v, const ModelConfig& text, VisionShape& shape) {
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
  // MllamaImageProcessor: tiles of image_size px, at most max_num_tiles, every image padded to
  // that many; MllamaVisionModel pads each tile's patches + class token to a multiple of 8. The
  // tiles' outputs are the cross-attention layers' keys and values; one <|image|> token each.
  set_encoder(shape, ImageTiling::kTiles, "MllamaImageProcessor", local + global, h,
              v.integer_or("attention_heads", 16), f, patch, text);
  shape.image_size = image;
  shape.class_token = true;
  shape.pad_encoder_to = 8;
  shape.max_tiles = tiles;
  shape.pad_to_max_tiles = true;
  shape.cross_attention = true;
  shape.marker_tokens = 1;
  return params;
}

// CLIPVisionTransformer: class_embedding (h), patch_embedding (Conv2d C·p²·h, no bias),
// position_embedding ((image/p)² + 1)·h, pre_layrnorm and post_layernorm (2h each); per layer
// two LayerNorms, q/k/v/out_proj with biases, fc1/fc2 with biases. LLaVA's defaults (the
// LlavaNextConfig vision_config) where a key is absent. The projector's linear_1 reads h_v per
// vision_feature_layer (an int or a list), both linears biased by multimodal_projector_bias
// (default true); image_newline holds h_t.
int64_t llava_next_vision(Fields& v, Fields& top, const ModelConfig& text, VisionShape& shape) {
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
  // LlavaNextImageProcessor (anyres): a base image and the crops of the best image_grid_pinpoint.
  set_encoder(shape, ImageTiling::kAnyRes, "LlavaNextProcessor", layers, h,
              v.integer_or("num_attention_heads", 16), f, patch, text);
  shape.image_size = image;
  shape.class_token = true;
  shape.anyres_keeps_cls =
      top.string("vision_feature_select_strategy").value_or("default") == "full";
  shape.pinpoints = grid_pinpoints(top);
  for (const auto& [ph, pw] : shape.pinpoints) {
    if (ph < image || pw < image) {
      top.fail({top.field("image_grid_pinpoints"), fmt::format("[{}, {}]", ph, pw),
                fmt::format("resolutions of at least the {} px crop on each side", image), ""});
      break;
    }
  }
  return params + text.hidden;  // image_newline
}

// Qwen3VLVisionModel: patch_embed (Conv3d C·t·p²·h with bias), pos_embed
// (num_position_embeddings·h); per block norm1/norm2 (LayerNorm), qkv (h -> 3h) and proj with
// biases, linear_fc1/fc2 with biases. The merger: LayerNorm over h, fc1 w -> w and fc2
// w -> out_hidden_size with biases (w = h·m²); each DeepStack merger the same with its LayerNorm
// over w.
int64_t qwen3_vl_vision(Fields& v, const ModelConfig& text, VisionShape& shape) {
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
  // Qwen2VLImageProcessor's smart_resize with Qwen3-VL's preprocessor sizes (shortest_edge
  // 65,536 and longest_edge 16,777,216 pixels); <|vision_start|> and <|vision_end|> markers.
  set_encoder(shape, ImageTiling::kSmartResize, "Qwen3-VL (Qwen2VLImageProcessor)", depth, h,
              v.integer_or("num_heads", 16), f, patch, text);
  shape.merge = merge;
  shape.min_pixels = 65536;
  shape.max_pixels = 16777216;
  shape.marker_tokens = 2;
  return params;
}

}  // namespace vramplan::hf
