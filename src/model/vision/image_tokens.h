// What one image costs in tokens: the sequences the vision encoder runs over it and the tokens
// it occupies in the language model's sequence (or, for mllama, in its cross-attention keys and
// values), as each family's transformers processor sizes the image.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/model/model.h"
#include "vramplan/model/vision_shape.h"

namespace vramplan {

struct ImageTokens {
  int64_t encoder_sequences = 0;  // tiles or crops the encoder runs as separate sequences
  int64_t encoder_tokens = 0;     // tokens in each of them (after any padding)
  int64_t lm_tokens = 0;          // tokens the image takes in the sequence, markers included
  int64_t cross_tokens = 0;       // mllama: keys/values per cross-attention layer
  std::string formula;            // how, with the values filled in
  int64_t encoder_total() const { return encoder_sequences * encoder_tokens; }
};

// The tokens of one width × height image. `pad_tiles`: the processor pads every image to the
// most tiles (transformers' MllamaImageProcessor does; vLLM counts the image's own tiles).
// Errors name `field` (the image size as the user gave it) for sizes the processor refuses.
Result<ImageTokens> image_tokens(const VisionShape& vision, int64_t width, int64_t height,
                                 bool pad_tiles, const std::string& field);

// The size the images are taken at (width, height): the one given, else the tower's own input
// (Gemma 3's fixed size, one tile) or, for processors that take any size, 1024 × 1024.
std::pair<int64_t, int64_t> image_size_of(const Images& images, const VisionShape& vision);

// images and image_size against the model: 0 to 1,024 images, a tower vramplan reads, a size its
// processor takes, and images × tokens within the `budget` tokens of a `budget_name` ("sequence",
// "context"; `per` is "sequence" or "request"). nullopt when they pass.
std::optional<Error> check_images(const ModelConfig& model, const Images& images, bool pad_tiles,
                                  int64_t budget, const char* budget_name, const char* per);

// "1024x768" -> {1024, 768}; an Error naming `field` otherwise.
Result<std::pair<int64_t, int64_t>> parse_image_size(const std::string& text,
                                                     const std::string& field);

}  // namespace vramplan
