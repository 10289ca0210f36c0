// The shape of a multimodal checkpoint's vision tower as far as memory needs it: how its
// processor turns one image into encoder tokens and language-model tokens, and the encoder's
// layer sizes. Read from config.json by the family readers (model/vision.cc); used by --images
// (model/image_tokens.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vramplan {

// How the processor sizes an image (each follows the transformers image processor named):
enum class ImageTiling {
  kNone,         // no tower read: --images is refused
  kFixed,        // resized to image_size² (Gemma3ImageProcessor: SigLIP at 896 px)
  kPixtral,      // longest edge capped at image_size, both sides to multiples of patch·merge
  kSmartResize,  // Qwen2-VL's smart_resize: multiples of patch·merge within [min, max] pixels
  kTiles,        // Llama 4 / mllama: a grid of image_size² tiles, at most max_tiles of them
  kAnyRes,       // LLaVA-NeXT: a base image plus the crops of the best grid pinpoint
};

struct VisionShape {
  ImageTiling tiling = ImageTiling::kNone;
  std::string processor;  // the transformers class the token counts follow, for the formulas

  // The encoder (a ViT): layer count, width, heads, MLP width and kind, norm kind.
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn = 0;
  bool gated_mlp = false;   // Pixtral, Qwen2.5-VL: gate/up/down; the others fc1/GELU/fc2
  bool rms_norm = false;    // Pixtral, Qwen2.5-VL: RMSNorm; the others LayerNorm
  int64_t text_hidden = 0;  // the language model's width the projector writes

  int64_t patch = 0;            // pixels per patch side
  int64_t image_size = 0;       // kFixed/kTiles: side of the image or tile; kPixtral: longest edge
  int64_t merge = 1;            // patches per side merged into one language-model token
  bool class_token = false;     // one more encoder token per tile or crop (CLIP, mllama)
  int64_t pad_encoder_to = 1;   // mllama pads each tile's tokens to a multiple of 8
  int64_t fixed_lm_tokens = 0;  // kFixed: tokens per image after pooling (Gemma 3: 256)
  int64_t marker_tokens = 0;    // start/end markers around each image's tokens
  int64_t max_tiles = 0;        // kTiles: most tiles in the grid
  bool global_tile = false;     // Llama 4: a whole-image tile beside a grid of 2+ tiles
  bool separator_tokens = false;  // Llama 4: a separator after each tile of the grid
  bool pad_to_max_tiles = false;  // mllama: the processor pads every image to max_tiles
  // mllama: the image tokens are the cross-attention layers' keys and values, not part of the
  // sequence (one <|image|> token stands for each image).
  bool cross_attention = false;
  int64_t min_pixels = 0, max_pixels = 0;              // kSmartResize bounds
  std::vector<std::pair<int64_t, int64_t>> pinpoints;  // kAnyRes grid resolutions (h, w)
  bool anyres_keeps_cls = false;                       // vision_feature_select_strategy "full"

  bool known() const { return tiling != ImageTiling::kNone; }
};

// The images each sequence carries (--images, --image-size), training and serving alike.
// width = height = 0: the tower's own size (one tile, the fixed input) or, for processors that
// take any size, 1024 × 1024.
struct Images {
  int64_t count = 0;
  int64_t width = 0;
  int64_t height = 0;
};

}  // namespace vramplan
