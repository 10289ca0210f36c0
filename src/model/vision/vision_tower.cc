#include "model/vision/vision_tower.h"

#include "model/config_fields.h"
#include "model/vision/recent_towers.h"

namespace vramplan::hf {
namespace {

// SiglipVisionTransformer (gemma3's vision_tower): patch conv (weight + bias), learned positions
// (image/patch)², per layer two LayerNorms, q/k/v/o with biases and fc1/fc2 with biases, then
// post_layernorm. Gemma3MultiModalProjector: mm_input_projection_weight (h_v x h_t) and
// mm_soft_emb_norm (RMSNorm h_v).
int64_t siglip_gemma3(Fields& v, Fields& top, const ModelConfig& text, VisionShape& shape) {
  const int64_t h = v.integer_or("hidden_size", 768), f = v.integer_or("intermediate_size", 3072);
  const int64_t layers = v.integer_or("num_hidden_layers", 12);
  const int64_t patch = v.integer_or("patch_size", 16), image = v.integer_or("image_size", 224);
  const int64_t channels = v.integer_or("num_channels", 3);
  const int64_t positions = (image / patch) * (image / patch);
  int64_t params = channels * patch * patch * h + h + positions * h;
  params += layers * biased_vit_layer(h, f) + 2 * h;  // post_layernorm
  if (v.boolean("vision_use_head", false)) {
    v.fail({v.field("vision_use_head"), "true", "false", "the pooling head is not counted"});
  }
  // Gemma3ImageProcessor resizes every image to image_size² (pan-and-scan off); the projector
  // pools the patches to mm_tokens_per_image; Gemma3Processor wraps them in <start_of_image>,
  // <end_of_image> and a "\n\n" token on each side.
  set_encoder(shape, ImageTiling::kFixed, "Gemma3ImageProcessor", layers, h,
              v.integer_or("num_attention_heads", 12), f, patch, text);
  shape.image_size = image;
  shape.fixed_lm_tokens = top.integer_or("mm_tokens_per_image", 256);
  shape.marker_tokens = 4;
  return params + h * text.hidden + h;
}

// PixtralVisionModel (mistral3): patch_conv without bias, ln_pre (RMSNorm), per layer
// attention_norm, q/k/v/o without biases, ffn_norm and a gated MLP without biases.
// Mistral3MultiModalProjector: norm (h_v), patch_merger (h_v·m² -> h_v), linear_1 (h_v -> h_t)
// and linear_2 (h_t -> h_t), biased when multimodal_projector_bias.
int64_t pixtral_mistral3(Fields& v, Fields& top, const ModelConfig& text, VisionShape& shape) {
  const int64_t h = v.integer_or("hidden_size", 1024), f = v.integer_or("intermediate_size", 4096);
  const int64_t layers = v.integer_or("num_hidden_layers", 24);
  const int64_t patch = v.integer_or("patch_size", 16), channels = v.integer_or("num_channels", 3);
  int64_t params = channels * patch * patch * h + h;
  params += layers * (2 * h + 4 * h * h + 3 * h * f);
  const int64_t merge = top.integer_or("spatial_merge_size", 2);
  const bool bias = top.boolean("multimodal_projector_bias", false);
  params += h + h * merge * merge * h;  // norm, patch_merger.merging_layer
  params += h * text.hidden + text.hidden * text.hidden + (bias ? 2 * text.hidden : 0);
  // PixtralImageProcessor (longest edge image_size, sides to multiples of patch · merge) and
  // Mistral3Processor: [IMG] per merged patch, an [IMG_BREAK] after each row ([IMG_END] last).
  set_encoder(shape, ImageTiling::kPixtral, "PixtralImageProcessor", layers, h,
              v.integer_or("num_attention_heads", 16), f, patch, text);
  shape.image_size = v.integer_or("image_size", 1540);
  shape.merge = merge;
  shape.gated_mlp = true;
  shape.rms_norm = true;
  return params;
}

// Qwen2_5_VisionTransformerPretrainedModel: Conv3d patch_embed (C·t·p²·h, no bias), per block
// norm1/norm2 (RMSNorm), qkv (h -> 3h, bias), proj (bias), gated MLP with biases; the merger's
// ln_q (h) and MLP h·m² -> h·m² -> out_hidden_size, both biased.
int64_t qwen25_vit(Fields& v, const ModelConfig& text, VisionShape& shape) {
  const int64_t h = v.integer_or("hidden_size", 1280), f = v.integer_or("intermediate_size", 3420);
  const int64_t depth = v.integer_or("depth", 32), patch = v.integer_or("patch_size", 14);
  const int64_t channels = v.integer_or("in_chans", 3);
  const int64_t temporal = v.integer_or("temporal_patch_size", 2);
  const int64_t merge = v.integer_or("spatial_merge_size", 2);
  const int64_t out = v.integer_or("out_hidden_size", text.hidden);
  int64_t params = channels * temporal * patch * patch * h;
  const int64_t block = 2 * h + (3 * h * h + 3 * h) + (h * h + h) + 3 * h * f + 2 * f + h;
  params += depth * block;
  const int64_t wide = h * merge * merge;
  params += h + (wide * wide + wide) + (wide * out + out);
  // Qwen2VLImageProcessor's smart_resize with Qwen2.5-VL's preprocessor bounds (3,136 to
  // 12,845,056 pixels); <|vision_start|> and <|vision_end|> around the image pads.
  set_encoder(shape, ImageTiling::kSmartResize, "Qwen2.5-VL (Qwen2VLImageProcessor)", depth, h,
              v.integer_or("num_heads", 16), f, patch, text);
  shape.merge = merge;
  shape.gated_mlp = true;
  shape.rms_norm = true;
  shape.min_pixels = 3136;
  shape.max_pixels = 12845056;
  shape.marker_tokens = 2;
  return params;
}

}  // namespace

Result<VisionTower> read_vision_tower(const json& root, const ModelConfig& text) {
  VisionTower tower;
  const std::string& type = text.model_type;
  auto it = root.find("vision_config");
  if (it == root.end() || !it->is_object()) {
    tower.note = type + ": no vision_config; the vision tower is not counted";
    return tower;
  }
  Fields v(*it, "config.vision_config.", nullptr);
  Fields top(root, "config.", nullptr);
  if (type == "gemma3") {
    tower.params = siglip_gemma3(v, top, text, tower.shape);
  } else if (type == "mistral3") {
    tower.params = pixtral_mistral3(v, top, text, tower.shape);
  } else if (type == "qwen2_5_vl") {
    tower.params = qwen25_vit(v, text, tower.shape);
  } else if (type == "llama4") {
    tower.params = llama4_vision(v, text, tower.shape);
  } else if (type == "mllama") {
    tower.params = mllama_vision(v, text, tower.shape);
  } else if (type == "qwen3_vl" || type == "qwen3_vl_moe") {
    tower.params = qwen3_vl_vision(v, text, tower.shape);
  } else if (type == "llava_next" &&
             v.string("model_type").value_or("clip_vision_model") == "clip_vision_model") {
    tower.params = llava_next_vision(v, top, text, tower.shape);
  } else {
    tower.note = type +
                 ": the vision tower is not counted (the language model is read exactly); on a "
                 "Hub fetch the checkpoint's own tensors give the weights";
  }
  if (v.error()) return *v.error();
  if (top.error()) return *top.error();
  return tower;
}

}  // namespace vramplan::hf
