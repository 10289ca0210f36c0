#include "model/vision/image_tokens.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/term.h"

namespace vramplan {
namespace {

// Images beyond this side are refused: no processor takes them and the products stay in range.
constexpr int64_t kMaxImageSide = 1 << 16;

// Python's round(): halves go to the even neighbour (the processors' arithmetic is Python's).
int64_t round_half_even(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

// The tile grid the Llama 4 and mllama processors choose (image_processing_llama4.get_best_fit,
// image_processing_mllama.get_optimal_tiled_canvas): of every rows × cols grid of at most
// max_tiles tiles, the one whose canvas needs the least upscaling; when every canvas would
// shrink the image, the one that shrinks it least; ties go to the fewest tiles.
std::pair<int64_t, int64_t> best_grid(const VisionShape& v, int64_t width, int64_t height) {
  struct Grid {
    int64_t rows, cols;
    double scale;
  };
  std::vector<Grid> grids;
  for (int64_t rows = 1; rows <= v.max_tiles; ++rows) {
    for (int64_t cols = 1; rows * cols <= v.max_tiles; ++cols) {
      const double scale = std::min(static_cast<double>(rows * v.image_size) / height,
                                    static_cast<double>(cols * v.image_size) / width);
      grids.push_back({rows, cols, scale});
    }
  }
  double up = std::numeric_limits<double>::infinity(), down = 0;
  for (const Grid& g : grids) {
    if (g.scale >= 1)
      up = std::min(up, g.scale);
    else
      down = std::max(down, g.scale);
  }
  const double chosen = std::isfinite(up) ? up : down;
  const Grid* best = nullptr;
  for (const Grid& g : grids) {
    if (g.scale == chosen && (best == nullptr || g.rows * g.cols < best->rows * best->cols))
      best = &g;
  }
  return {best->rows, best->cols};
}

ImageTokens fixed(const VisionShape& v) {
  ImageTokens t;
  const int64_t side = v.image_size / v.patch;
  t.encoder_sequences = 1;
  t.encoder_tokens = side * side;
  t.lm_tokens = v.fixed_lm_tokens + v.marker_tokens;
  t.formula = fmt::format(
      "{}: every image resized to {}² px → ({}/{})² = {} patches; pooled to {} tokens + {} markers",
      v.processor, v.image_size, v.image_size, v.patch, t.encoder_tokens, v.fixed_lm_tokens,
      v.marker_tokens);
  return t;
}

ImageTokens pixtral(const VisionShape& v, int64_t width, int64_t height) {
  const double ratio = std::max(static_cast<double>(height) / v.image_size,
                                static_cast<double>(width) / v.image_size);
  int64_t h = height, w = width;
  if (ratio > 1) {
    h = static_cast<int64_t>(std::floor(height / ratio));
    w = static_cast<int64_t>(std::floor(width / ratio));
  }
  const int64_t unit = v.patch * v.merge;
  const int64_t rows = (h - 1) / unit + 1, cols = (w - 1) / unit + 1;
  ImageTokens t;
  t.encoder_sequences = 1;
  t.encoder_tokens = rows * v.merge * cols * v.merge;
  t.lm_tokens = rows * (cols + 1);
  t.formula = fmt::format(
      "{}: longest edge ≤ {} px → {}×{} px, {} × {} patches of {} px; merged {}×{}: {} rows × "
      "({} + 1 break) = {} tokens",
      v.processor, v.image_size, w, h, cols * v.merge, rows * v.merge, v.patch, v.merge, v.merge,
      rows, cols, t.lm_tokens);
  return t;
}

Result<ImageTokens> smart_resize(const VisionShape& v, int64_t width, int64_t height,
                                 const std::string& field) {
  if (std::max(width, height) > 200 * std::min(width, height)) {
    return Error{field, fmt::format("{}x{}", width, height),
                 "an aspect ratio below 200:1 (Qwen2-VL's smart_resize refuses wider images)", ""};
  }
  const int64_t factor = v.patch * v.merge;
  int64_t h = std::max(factor, round_half_even(static_cast<double>(height) / factor) * factor);
  int64_t w = std::max(factor, round_half_even(static_cast<double>(width) / factor) * factor);
  const double pixels = static_cast<double>(height) * width;
  if (h * w > v.max_pixels) {
    const double beta = std::sqrt(pixels / v.max_pixels);
    h = std::max(factor, static_cast<int64_t>(std::floor(height / beta / factor)) * factor);
    w = std::max(factor, static_cast<int64_t>(std::floor(width / beta / factor)) * factor);
  } else if (h * w < v.min_pixels) {
    const double beta = std::sqrt(v.min_pixels / pixels);
    h = static_cast<int64_t>(std::ceil(height * beta / factor)) * factor;
    w = static_cast<int64_t>(std::ceil(width * beta / factor)) * factor;
  }
  ImageTokens t;
  t.encoder_sequences = 1;
  t.encoder_tokens = (h / v.patch) * (w / v.patch);
  t.lm_tokens = (h / factor) * (w / factor) + v.marker_tokens;
  t.formula = fmt::format(
      "{} smart_resize: {}×{} px (multiples of {}, {}–{} pixels) → {} patches of {} px; merged "
      "{}×{}: {} + {} markers = {} tokens",
      v.processor, w, h, factor, v.min_pixels, v.max_pixels, t.encoder_tokens, v.patch, v.merge,
      v.merge, t.lm_tokens - v.marker_tokens, v.marker_tokens, t.lm_tokens);
  return t;
}

ImageTokens tiles(const VisionShape& v, int64_t width, int64_t height, bool pad_tiles) {
  const auto [rows, cols] = best_grid(v, width, height);
  const int64_t grid = rows * cols;
  const int64_t side = v.image_size / v.patch;
  const int64_t per_tile_merged = (side / v.merge) * (side / v.merge);
  ImageTokens t;
  t.encoder_sequences = grid + (v.global_tile && grid > 1 ? 1 : 0);
  if (pad_tiles && v.pad_to_max_tiles) t.encoder_sequences = v.max_tiles;
  const int64_t tokens = side * side + (v.class_token ? 1 : 0);
  t.encoder_tokens = (tokens + v.pad_encoder_to - 1) / v.pad_encoder_to * v.pad_encoder_to;
  std::string how =
      fmt::format("{}: a {}×{} grid of {}² px tiles", v.processor, rows, cols, v.image_size);
  if (v.cross_attention) {
    t.lm_tokens = v.marker_tokens;
    t.cross_tokens = t.encoder_sequences * tokens;
    t.formula = fmt::format(
        "{}{}; {} tiles × ({}² patches + 1 class) = {} cross-attention tokens; {} <|image|> token "
        "in the sequence",
        how, pad_tiles && v.pad_to_max_tiles ? " padded to the processor's max tiles" : "",
        t.encoder_sequences, side, t.cross_tokens, v.marker_tokens);
    return t;
  }
  const int64_t tiled = grid > 1 ? grid * per_tile_merged + (v.separator_tokens ? grid : 0) : 0;
  const int64_t whole = grid == 1 || v.global_tile ? per_tile_merged : 0;
  t.lm_tokens = tiled + whole + v.marker_tokens;
  t.formula = fmt::format(
      "{}{}; {} encoder tiles of {} tokens; {} tokens per tile after the {}×{} pixel shuffle: "
      "{} + {} markers = {} tokens",
      how, grid > 1 && v.global_tile ? " + 1 global tile" : "", t.encoder_sequences,
      t.encoder_tokens, per_tile_merged, v.merge, v.merge, t.lm_tokens - v.marker_tokens,
      v.marker_tokens, t.lm_tokens);
  return t;
}

// transformers image_processing_utils.select_best_resolution: the grid pinpoint that keeps the
// most of the image's resolution, then wastes the fewest pixels.
std::pair<int64_t, int64_t> best_pinpoint(const VisionShape& v, int64_t width, int64_t height) {
  std::pair<int64_t, int64_t> best = v.pinpoints.front();
  int64_t most = -1, least_waste = 0;
  for (const auto& [h, w] : v.pinpoints) {
    const double scale = std::min(static_cast<double>(w) / width, static_cast<double>(h) / height);
    const int64_t kept_w = static_cast<int64_t>(width * scale);
    const int64_t kept_h = static_cast<int64_t>(height * scale);
    const int64_t effective = std::min(kept_w * kept_h, width * height);
    const int64_t waste = h * w - effective;
    if (effective > most || (effective == most && waste < least_waste)) {
      most = effective;
      least_waste = waste;
      best = {h, w};
    }
  }
  return best;
}

// Python's int(round(x, 7)).
int64_t round7_trunc(double x) { return static_cast<int64_t>(std::round(x * 1e7) / 1e7); }

// LlavaNextProcessor._get_number_of_features: the base image's patches, the crops' patches with
// the padding around the image removed (_get_unpadded_features), and one newline per row.
ImageTokens anyres(const VisionShape& v, int64_t width, int64_t height) {
  const auto [best_h, best_w] = best_pinpoint(v, width, height);
  const int64_t scale_h = best_h / v.image_size, scale_w = best_w / v.image_size;
  const int64_t side = v.image_size / v.patch;
  int64_t rows = side * scale_h, cols = side * scale_w;
  const double aspect = static_cast<double>(width) / height;
  if (aspect > static_cast<double>(cols) / rows) {
    const int64_t kept = round7_trunc(height * (static_cast<double>(cols) / width));
    rows -= (rows - kept) / 2 * 2;
  } else {
    const int64_t kept = round7_trunc(width * (static_cast<double>(rows) / height));
    cols -= (cols - kept) / 2 * 2;
  }
  ImageTokens t;
  t.encoder_sequences = 1 + scale_h * scale_w;
  t.encoder_tokens = side * side + (v.class_token ? 1 : 0);
  const int64_t base = side * side + (v.anyres_keeps_cls ? 1 : 0);
  t.lm_tokens = rows * cols + rows + base;
  t.formula = fmt::format(
      "{}: pinpoint {}×{} px → base + {}×{} crops of {}² px ({} encoder sequences of {} tokens); "
      "{} unpadded × {} + {} newlines + {} base = {} tokens",
      v.processor, best_w, best_h, scale_w, scale_h, v.image_size, t.encoder_sequences,
      t.encoder_tokens, rows, cols, rows, base, t.lm_tokens);
  return t;
}

}  // namespace

Result<ImageTokens> image_tokens(const VisionShape& v, int64_t width, int64_t height,
                                 bool pad_tiles, const std::string& field) {
  if (width < 1 || height < 1 || width > kMaxImageSide || height > kMaxImageSide) {
    return Error{field, fmt::format("{}x{}", width, height),
                 fmt::format("a width and height of 1 to {} pixels", kMaxImageSide), ""};
  }
  switch (v.tiling) {
    case ImageTiling::kFixed:
      return fixed(v);
    case ImageTiling::kPixtral:
      return pixtral(v, width, height);
    case ImageTiling::kSmartResize:
      return smart_resize(v, width, height, field);
    case ImageTiling::kTiles:
      return tiles(v, width, height, pad_tiles);
    case ImageTiling::kAnyRes:
      return anyres(v, width, height);
    case ImageTiling::kNone:
      break;
  }
  return Error{field, fmt::format("{}x{}", width, height), "a model with a vision tower",
               "vramplan reads no vision tower for this model"};
}

std::pair<int64_t, int64_t> image_size_of(const Images& images, const VisionShape& v) {
  constexpr int64_t kDefaultDynamicSide = 1024;
  if (images.width > 0) return {images.width, images.height};
  const bool own = v.tiling == ImageTiling::kFixed || v.tiling == ImageTiling::kTiles;
  const int64_t side = own ? v.image_size : kDefaultDynamicSide;
  return {side, side};
}

std::optional<Error> check_images(const ModelConfig& model, const Images& images, bool pad_tiles,
                                  int64_t budget, const char* budget_name, const char* per) {
  constexpr int64_t kMaxImages = 1024;
  if (images.count < 0 || images.count > kMaxImages)
    return Error{"images", std::to_string(images.count),
                 fmt::format("0 to {} images per {}", kMaxImages, per), ""};
  if (images.width < 0 || images.height < 0 || (images.width == 0) != (images.height == 0))
    return Error{"image_size", fmt::format("{}x{}", images.width, images.height),
                 "WIDTHxHEIGHT in pixels, such as 1024x768", ""};
  if (images.count == 0) return std::nullopt;
  if (!model.vision.known())
    return Error{
        "images", std::to_string(images.count), "0 for this model",
        (model.model_type.empty() ? std::string("the model") : "model_type " + model.model_type) +
            " has no vision tower vramplan reads (docs/models.md lists those it does)"};
  const auto [w, h] = image_size_of(images, model.vision);
  Result<ImageTokens> t = image_tokens(model.vision, w, h, pad_tiles, "image_size");
  if (!t.ok()) return t.error();
  if (t->lm_tokens > 0 && Wide{images.count} * t->lm_tokens > budget)
    return Error{"images", std::to_string(images.count),
                 fmt::format("at most {} images of {}×{} px in a {}-token {}",
                             budget / t->lm_tokens, w, h, budget, budget_name),
                 fmt::format("each image takes {} tokens of the {} ({})", t->lm_tokens, budget_name,
                             t->formula)};
  return std::nullopt;
}

Result<std::pair<int64_t, int64_t>> parse_image_size(const std::string& text,
                                                     const std::string& field) {
  const Error bad{field, text, "WIDTHxHEIGHT in pixels, such as 1024x768", ""};
  const size_t x = text.find_first_of("xX");
  if (x == std::string::npos || x == 0 || x + 1 == text.size()) return bad;
  int64_t sides[2] = {0, 0};
  const std::string parts[2] = {text.substr(0, x), text.substr(x + 1)};
  for (int i = 0; i < 2; ++i) {
    if (parts[i].size() > 6) return bad;
    for (char c : parts[i]) {
      if (c < '0' || c > '9') return bad;
      sides[i] = sides[i] * 10 + (c - '0');
    }
  }
  if (sides[0] < 1 || sides[1] < 1 || sides[0] > kMaxImageSide || sides[1] > kMaxImageSide) {
    return Error{field, text, fmt::format("a width and height of 1 to {} pixels", kMaxImageSide),
                 ""};
  }
  return std::pair<int64_t, int64_t>{sides[0], sides[1]};
}

}  // namespace vramplan
