#include "model/vision/image_tokens.h"

#include <gtest/gtest.h>

#include "model/test_models.h"
#include "vramplan/model/presets.h"

namespace vramplan {
namespace {

using testing::parse_ok;

VisionShape preset_vision(std::string_view name) {
  const Preset* preset = find_preset(name);
  EXPECT_NE(preset, nullptr) << name;
  return preset == nullptr ? VisionShape{} : parse_ok(preset->config).vision;
}

ImageTokens tokens(const VisionShape& v, int64_t w, int64_t h, bool pad_tiles = false) {
  Result<ImageTokens> t = image_tokens(v, w, h, pad_tiles, "image_size");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message());
  return t.ok() ? *t : ImageTokens{};
}

// Expected counts come from transformers 5.24's own functions run on the same sizes
// (qwen2_vl smart_resize, select_best_resolution + LlavaNextProcessor._get_number_of_features,
// mllama get_optimal_tiled_canvas, llama4 get_best_fit + _prompt_split_image, pixtral
// get_resize_output_image_size with Mistral3's patch 14 × merge 2).
struct Case {
  int64_t w, h;
  int64_t qwen25_patches, qwen25_tokens;
  int64_t qwen3_patches, qwen3_tokens;
  int64_t llava_sequences, llava_tokens;
  int64_t mllama_tiles;
  int64_t llama4_rows, llama4_cols, llama4_tokens;
  int64_t pixtral_patches, pixtral_tokens;
};
constexpr Case kCases[] = {
    {1024, 768, 3996, 1001, 3072, 770, 5, 2340, 4, 3, 4, 1887, 4144, 1064},
    {640, 480, 1564, 393, 1200, 302, 5, 2340, 2, 2, 2, 727, 1656, 432},
    {4000, 3000, 61204, 15303, 47000, 11752, 5, 2340, 4, 3, 4, 1887, 9240, 2352},
    {100, 50, 32, 10, 288, 74, 3, 1752, 1, 1, 1, 147, 32, 10},
    {336, 336, 576, 146, 400, 102, 3, 1176, 1, 1, 1, 147, 576, 156},
    {2000, 500, 5112, 1280, 3968, 994, 4, 1890, 4, 2, 6, 1887, 3080, 784},
    {300, 200, 308, 79, 280, 72, 3, 1464, 1, 1, 1, 147, 352, 96},
    {560, 560, 1600, 402, 1296, 326, 5, 2928, 1, 2, 2, 727, 1600, 420},
    {1540, 1540, 12100, 3027, 9216, 2306, 5, 2928, 4, 4, 4, 2467, 12100, 3080},
};

TEST(ImageTokens, QwenSmartResizeAsTransformers) {
  const VisionShape qwen25 = preset_vision("Qwen2.5-VL-7B-Instruct");
  // Qwen3-VL-8B's vision_config (Qwen3VLVisionConfig defaults) under a tiny text model.
  const VisionShape qwen3 = parse_ok(R"({"model_type": "qwen3_vl", "text_config": {
      "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "intermediate_size": 128, "vocab_size": 100}, "vision_config": {}})")
                                .vision;
  for (const Case& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h);
    EXPECT_EQ(tokens(qwen25, c.w, c.h).encoder_tokens, c.qwen25_patches);
    EXPECT_EQ(tokens(qwen25, c.w, c.h).lm_tokens, c.qwen25_tokens);
    EXPECT_EQ(tokens(qwen3, c.w, c.h).encoder_tokens, c.qwen3_patches);
    EXPECT_EQ(tokens(qwen3, c.w, c.h).lm_tokens, c.qwen3_tokens);
  }
}

TEST(ImageTokens, TiledProcessorsAsTransformers) {
  const VisionShape llama4 = preset_vision("Llama-4-Scout-17B-16E-Instruct");
  const VisionShape mllama = preset_vision("Llama-3.2-11B-Vision-Instruct");
  for (const Case& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h);
    const ImageTokens l4 = tokens(llama4, c.w, c.h);
    EXPECT_EQ(l4.lm_tokens, c.llama4_tokens);
    const int64_t grid = c.llama4_rows * c.llama4_cols;
    EXPECT_EQ(l4.encoder_sequences, grid + (grid > 1 ? 1 : 0));  // + the global tile
    EXPECT_EQ(l4.encoder_tokens, 24 * 24 + 1);
    EXPECT_EQ(l4.cross_tokens, 0);
    // vLLM counts the image's own tiles; transformers' processor pads to max_num_tiles (4).
    const ImageTokens own = tokens(mllama, c.w, c.h, false);
    EXPECT_EQ(own.cross_tokens, c.mllama_tiles * 1601);
    EXPECT_EQ(own.lm_tokens, 1);
    EXPECT_EQ(own.encoder_tokens, 1608);  // 1601 padded to a multiple of 8
    EXPECT_EQ(tokens(mllama, c.w, c.h, true).cross_tokens, 4 * 1601);
  }
}

TEST(ImageTokens, AnyResAndPixtralAsTransformers) {
  const VisionShape llava = parse_ok(R"({"model_type": "llava_next", "text_config": {
      "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100}, "vision_config": {}})")
                                .vision;
  const VisionShape pixtral = preset_vision("Mistral-Small-3.1-24B-Instruct-2503");
  for (const Case& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h);
    EXPECT_EQ(tokens(llava, c.w, c.h).encoder_sequences, c.llava_sequences);
    EXPECT_EQ(tokens(llava, c.w, c.h).encoder_tokens, 577);
    EXPECT_EQ(tokens(llava, c.w, c.h).lm_tokens, c.llava_tokens);
    EXPECT_EQ(tokens(pixtral, c.w, c.h).encoder_tokens, c.pixtral_patches);
    EXPECT_EQ(tokens(pixtral, c.w, c.h).lm_tokens, c.pixtral_tokens);
  }
}

TEST(ImageTokens, Gemma3IsFixed) {
  const VisionShape gemma = preset_vision("gemma-3-27b");
  for (const Case& c : kCases) {
    const ImageTokens t = tokens(gemma, c.w, c.h);
    EXPECT_EQ(t.encoder_tokens, 64 * 64);  // 896 px / 14
    EXPECT_EQ(t.lm_tokens, 256 + 4);       // boi, eoi and "\n\n" on each side
  }
}

TEST(ImageTokens, RefusalsNameTheField) {
  const VisionShape qwen25 = preset_vision("Qwen2.5-VL-7B-Instruct");
  Result<ImageTokens> wide = image_tokens(qwen25, 4000, 10, false, "image_size");
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.error().field, "image_size");
  EXPECT_NE(wide.error().accepted.find("200:1"), std::string::npos);
  EXPECT_FALSE(image_tokens(VisionShape{}, 100, 100, false, "images").ok());
  EXPECT_FALSE(image_tokens(qwen25, 0, 100, false, "image_size").ok());

  EXPECT_EQ(*parse_image_size("1024x768", "image_size"), (std::pair<int64_t, int64_t>{1024, 768}));
  EXPECT_EQ(*parse_image_size("640X480", "image_size"), (std::pair<int64_t, int64_t>{640, 480}));
  for (const char* bad : {"", "1024", "x768", "1024x", "-1x5", "0x10", "1e3x10", "99999999x1",
                          "70000x10", "10x10x10"}) {
    Result<std::pair<int64_t, int64_t>> parsed = parse_image_size(bad, "image_size");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().field, "image_size");
  }
}

TEST(ImageTokens, EncoderShapesFromTheReaders) {
  const VisionShape mllama = preset_vision("Llama-3.2-11B-Vision-Instruct");
  EXPECT_EQ(mllama.layers, 32 + 8);  // local + global layers
  EXPECT_EQ(mllama.hidden, 1280);
  EXPECT_TRUE(mllama.cross_attention);
  const VisionShape qwen25 = preset_vision("Qwen2.5-VL-7B-Instruct");
  EXPECT_EQ(qwen25.layers, 32);
  EXPECT_TRUE(qwen25.gated_mlp);
  EXPECT_TRUE(qwen25.rms_norm);
  EXPECT_EQ(qwen25.text_hidden, 3584);
  // A text-only model has no tower to size.
  EXPECT_FALSE(parse_ok(find_preset("Llama-3.1-8B")->config).vision.known());
}

}  // namespace
}  // namespace vramplan
