#include "training/multimodal/vision_activations.h"

#include <gtest/gtest.h>

#include "model/test_models.h"
#include "vramplan/model/presets.h"
#include "vramplan/training/estimate.h"

namespace vramplan {
namespace {

Scenario with_images(const char* preset, int64_t count, int64_t w, int64_t h) {
  Scenario s;
  s.model = testing::parse_ok(find_preset(preset)->config);
  s.images = Images{count, w, h};
  return s;
}

// Qwen2.5-VL-7B, two 1024×768 images: 3,996 patches each (smart_resize to 1036×756 px).
// Per token and layer: RMSNorms 2·((4 + 2)·1280 + 4) = 15,368, 7·h·B = 17,920, 4·16 heads = 64,
// gated MLP 4·3420·2 = 27,360: 60,712 B.
TEST(VisionActivations, EncoderByHand) {
  Scenario s = with_images("Qwen2.5-VL-7B-Instruct", 2, 1024, 768);
  EXPECT_EQ(vision_encoder_activations(s, false).bytes, Wide{60712} * 32 * 2 * 3996);
  s.training.micro_batch = 3;
  EXPECT_EQ(vision_encoder_activations(s, false).bytes, Wide{60712} * 32 * 3 * 2 * 3996);
  // Full recomputation: each layer's input (h·B) and one layer re-run.
  s.training.micro_batch = 1;
  s.training.recompute = Recompute::kFull;
  EXPECT_EQ(vision_encoder_activations(s, false).bytes, Wide{2 * 3996} * (32 * 2560 + 60712));
  // A frozen tower (LoRA on the language model) keeps nothing.
  s.finetune.method = FinetuneMethod::kLora;
  EXPECT_EQ(vision_encoder_activations(s, false).bytes, 0);
  EXPECT_NE(images_note(s).find("frozen"), std::string::npos);
}

// Llama-3.2-11B-Vision: 8 cross-attention layers, g·d = 8·128; transformers pads each image to
// 4 tiles of 1,601 tokens. Per token: 8 × 1024 × (3·2 + 4) + the vision states 4096 × 2.
TEST(VisionActivations, MllamaCrossAttentionKvByHand) {
  Scenario s = with_images("Llama-3.2-11B-Vision-Instruct", 1, 560, 560);
  EXPECT_EQ(cross_attention_image_kv(s, 8, false).bytes, Wide{4 * 1601} * (8 * 1024 * 10 + 8192));
  s.parallel.tp = 2;  // K/V heads split, the vision states not
  EXPECT_EQ(cross_attention_image_kv(s, 8, false).bytes, Wide{4 * 1601} * (8 * 512 * 10 + 8192));
  EXPECT_EQ(cross_attention_image_kv(s, 0, false).bytes, 0);
}

TEST(VisionActivations, EstimateRowsAndChecks) {
  Scenario s = with_images("Qwen2.5-VL-7B-Instruct", 2, 1024, 768);
  Result<Estimate> e = estimate(s);
  ASSERT_TRUE(e.ok()) << e.error().message();
  bool row = false;
  for (const Row& r : e->stages[0].rows) row |= r.component == "vision encoder activations";
  EXPECT_TRUE(row);
  bool noted = false;
  for (const std::string& w : e->warnings) noted |= w.find("1001 tokens each") != w.npos;
  EXPECT_TRUE(noted);
  // Five images take 5,005 tokens of a 4,096-token sequence.
  s.images.count = 5;
  Result<Estimate> long_images = estimate(s);
  ASSERT_FALSE(long_images.ok());
  EXPECT_EQ(long_images.error().field, "images");
  EXPECT_NE(long_images.error().accepted.find("at most 4 images"), std::string::npos);
  // A text-only model has no tower.
  Scenario text;
  text.model = testing::parse_ok(find_preset("Llama-3.1-8B")->config);
  text.images.count = 1;
  Result<Estimate> refused = estimate(text);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "images");
}

}  // namespace
}  // namespace vramplan
