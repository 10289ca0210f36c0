// The families of issue 22 read by recent_readers.cc, worked by hand per layer kind. Every
// total below also equals transformers 5.24's sum of numel() over the model built from the same
// config on the meta device.
#include "model/recent/recent_readers.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "model/test_models.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/params.h"

namespace vramplan {
namespace {

using testing::parse_error;
using testing::parse_ok;

// Shared by the tiny configs: h=64, a=4, g=2 (d=16), V=100, untied.
//   attention q 64*64 + k,v 2*64*32 + o 64*64 = 12288; norms 2*64 = 128
//   embedding + head 2*100*64 = 12800; final norm 64

// Jamba: L=4, attention where i % 2 == 1, MoE where i % 2 == 0 (E=4, k=2, f=96).
//   Mamba-1, d_inner = 2*64 = 128, R=8, N=4, K=4:
//     in_proj 64*256 = 16384, x_proj 128*(8+2*4) = 2048, dt_proj 8*128 = 1024,
//     out_proj 128*64 = 8192 -> ssm 27648
//     conv 128*4 + 128 = 640, dt_proj bias 128, A_log 128*4 = 512, D 128,
//     dt/B/C norms 8+4+4 -> small 1424
//   MoE router 4*64 = 256 + experts 4*3*64*96 = 73728; dense MLP 3*64*96 = 18432
//   total = 2*(29072 + 73984 + 128) + 2*(12288 + 18432 + 128) + 12800 + 64 = 280928
constexpr char kTinyJamba[] = R"({
  "model_type": "jamba", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
  "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100,
  "tie_word_embeddings": false, "mamba_expand": 2, "mamba_dt_rank": 8, "mamba_d_state": 4,
  "mamba_d_conv": 4, "attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2,
  "expert_layer_offset": 0, "num_experts": 4, "num_experts_per_tok": 2 })";

TEST(RecentReadersTest, JambaMamba1LayersByHand) {
  ModelConfig m = parse_ok(kTinyJamba);
  ASSERT_EQ(m.layer_mixer.size(), 4u);
  EXPECT_EQ(m.layer_mixer[0], LayerMixer::kMamba2);
  EXPECT_EQ(m.layer_mixer[1], LayerMixer::kAttention);
  EXPECT_EQ(m.mamba.dt_rank, 8);
  EXPECT_EQ(m.mamba.d_inner(), 128);
  EXPECT_EQ(m.mamba.conv_dim(), 128);  // Mamba-1 convolves x only
  EXPECT_TRUE(m.moe_layers[0]);
  EXPECT_FALSE(m.moe_layers[1]);
  ParamCounts c = count_parameters(m);
  EXPECT_EQ(c.layers[0].ssm, 27648);
  EXPECT_EQ(c.layers[0].ssm_small, 1424);
  EXPECT_EQ(c.layers[1].attention, 12288);
  EXPECT_EQ(c.layers[1].mlp, 18432);
  EXPECT_EQ(c.layers[0].routed_experts, 73728);
  EXPECT_EQ(c.total, 280928);
}

TEST(RecentReadersTest, JambaOneExpertIsADenseMlp) {
  std::string json = kTinyJamba;
  json.replace(json.find("\"num_experts\": 4"), 16, "\"num_experts\": 1");
  ModelConfig m = parse_ok(json);
  EXPECT_FALSE(m.is_moe());
  EXPECT_EQ(count_parameters(m).layers[0].mlp, 18432);
}

TEST(RecentReadersTest, JambaOffsetBeyondPeriodIsAnError) {
  std::string json = kTinyJamba;
  json.replace(json.find("\"attn_layer_offset\": 1"), 22, "\"attn_layer_offset\": 2");
  EXPECT_EQ(parse_error(json).field, "config.attn_layer_offset");
}

// Falcon-H1: L=2, head_dim 16, f=96, Mamba-2 beside attention in both layers: d_ssm 128 in
// H=4 heads (P=32), G=1, N=8, K=4, gated norm (mamba_rms_norm).
//   in_proj 64*(2*128 + 2*8 + 4) = 17664, out_proj 128*64 = 8192
//   conv (128+16)*4 + 144 = 720, dt_bias/A_log/D 12, norm 128
//   layer = 12288 + 25856 + 860 + 18432 + 128 = 57564; total 2*57564 + 12800 + 64 = 127992
constexpr char kTinyFalcon[] = R"({
  "model_type": "falcon_h1", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 96,
  "vocab_size": 100, "tie_word_embeddings": false, "mamba_d_ssm": 128, "mamba_n_heads": 4,
  "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 8, "mamba_d_conv": 4,
  "mamba_rms_norm": true, "key_multiplier": 0.5, "ssm_multipliers": [1, 1, 1, 1, 1] })";

TEST(RecentReadersTest, FalconH1ParallelMixersByHand) {
  ModelConfig m = parse_ok(kTinyFalcon);
  EXPECT_TRUE(m.parallel_mamba);
  EXPECT_EQ(m.mixer(0), LayerMixer::kAttention);
  EXPECT_EQ(m.mamba.head_dim, 32);
  ParamCounts c = count_parameters(m);
  EXPECT_EQ(c.layers[0].attention, 12288);
  EXPECT_EQ(c.layers[0].ssm, 17664 + 8192);
  EXPECT_EQ(c.layers[0].ssm_small, 720 + 12 + 128);
  EXPECT_EQ(c.total, 127992);
}

TEST(RecentReadersTest, FalconH1HeadsMustTileTheSsmWidth) {
  std::string json = kTinyFalcon;
  json.replace(json.find("\"auto\""), 6, "30");
  Error e = parse_error(json);
  EXPECT_EQ(e.field, "config.mamba_d_head");
}

// Llama 4 text: L=4, MoE every 2nd layer (1, 3): router 4*64 = 256, E=4 experts of f=32
// 4*3*64*32 = 24576 and a shared expert 3*64*32 = 6144; dense layers f_mlp=96 -> 18432.
//   total = 2*(12288 + 18432 + 128) + 2*(12288 + 30976 + 128) + 12800 + 64 = 161344
// RoPE layers (all but every 4th) attend in 128-token chunks, held as a sliding window.
constexpr char kTinyLlama4Text[] = R"({
  "model_type": "llama4_text", "hidden_size": 64, "num_hidden_layers": 4,
  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32,
  "intermediate_size_mlp": 96, "vocab_size": 100, "tie_word_embeddings": false,
  "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
  "attention_chunk_size": 128 })";

TEST(RecentReadersTest, Llama4InterleavedMoeAndChunksByHand) {
  ModelConfig m = parse_ok(kTinyLlama4Text);
  EXPECT_FALSE(m.moe_layers[0]);
  EXPECT_TRUE(m.moe_layers[1]);
  EXPECT_EQ(m.sliding_window, 128);
  EXPECT_EQ(m.layer_attention[0], LayerAttention::kSliding);
  EXPECT_EQ(m.layer_attention[3], LayerAttention::kFull);  // NoPE layer
  ParamCounts c = count_parameters(m);
  EXPECT_EQ(c.layers[0].mlp, 18432);
  EXPECT_EQ(c.layers[1].mlp, 6144);  // the shared expert
  EXPECT_EQ(c.layers[1].router, 256);
  EXPECT_EQ(c.layers[1].routed_experts, 24576);
  EXPECT_EQ(c.total, 161344);
  EXPECT_EQ(c.active, 161344 - 2 * 3 * (3 * 64 * 32));  // 1 of 4 experts per MoE layer
}

// Llama 4 multimodal: the text model above in text_config plus Llama4VisionModel with h=32,
// f=64, one layer, 28/14 -> 4 patches + class:
//   patch 3*14*14*32 = 18816, class 32, positions 5*32 = 160, layernorm pre/post 128,
//   layer 2 LayerNorms 128 + q/k/v/o with biases 4224 + fc1 2112 + fc2 2080 = 8544,
//   adapter fc1 64*48 + fc2 48*48 = 5376, projector 48*64 = 3072 -> vision 36128
TEST(RecentReadersTest, Llama4VisionTowerByHand) {
  std::string text = kTinyLlama4Text;
  std::string json = R"({"model_type": "llama4", "tie_word_embeddings": false, "text_config": )" +
                     text + R"(, "vision_config": {"hidden_size": 32, "intermediate_size": 64,
    "num_hidden_layers": 1, "patch_size": 14, "image_size": 28, "num_channels": 3,
    "pixel_shuffle_ratio": 0.5, "projector_input_dim": 48, "projector_output_dim": 48,
    "vision_output_dim": 48}})";
  ModelConfig m = parse_ok(json);
  EXPECT_EQ(m.vision_params, 36128);
  EXPECT_EQ(count_parameters(m).total, 161344 + 36128);
}

// Llama-3.2-Vision: L=4 with layer 1 cross-attention (q_norm, k_norm 2*16 and two gates);
// embed_tokens has V + 8 rows.
//   text = 3*30848 + (30848 + 34) + 108*64 + 100*64 + 64 = 136802
// MllamaVisionModel h=32 f=64, 2 local + 1 global layer, 28/14 -> 5 positions, 2 tiles,
// 2 aspect ratios (A+1 = 3):
//   patch 18816, class 32, gated positions 160 + 1 + tiles 3*2*5*32 = 960,
//   pre/post tile 2*(3*2*32 + 1) = 386, layernorms 128,
//   layer 128 + 4*32*32 + 2112 + 2080 = 8416 -> 2*8416 + (8416 + 2), projector 96*64 + 64
//   vision = 51941
TEST(RecentReadersTest, MllamaCrossAttentionAndVisionByHand) {
  ModelConfig m = parse_ok(R"({"model_type": "mllama",
    "text_config": {"model_type": "mllama_text_model", "hidden_size": 64,
      "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
      "intermediate_size": 96, "vocab_size": 100, "tie_word_embeddings": false,
      "cross_attention_layers": [1]},
    "vision_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
      "num_global_layers": 1, "patch_size": 14, "image_size": 28, "num_channels": 3,
      "max_num_tiles": 2, "supported_aspect_ratios": [[1, 1], [1, 2]],
      "vision_output_dim": 96}})");
  EXPECT_EQ(m.mixer(1), LayerMixer::kCrossAttention);
  EXPECT_EQ(m.mixer(0), LayerMixer::kAttention);
  ParamCounts c = count_parameters(m);
  EXPECT_EQ(c.embedding, 108 * 64);
  EXPECT_EQ(c.layers[1].total() - c.layers[0].total(), 2 * 16 + 2);
  EXPECT_EQ(m.vision_params, 51941);
  EXPECT_EQ(c.total, 136802 + 51941);
}

TEST(RecentReadersTest, MllamaCrossLayerOutOfRange) {
  Error e = parse_error(R"({"model_type": "mllama", "text_config": {"hidden_size": 64,
    "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 96,
    "vocab_size": 100, "cross_attention_layers": [4]}, "vision_config": {}})");
  EXPECT_EQ(e.field, "config.text_config.cross_attention_layers");
}

// Hunyuan-MoE: L=2, E=4 experts of intermediate_size 32 (top 2), a shared MLP of 32, per-head
// q/k norms, tied.
//   layer = 12288 + 32 + router 256 + experts 24576 + shared 6144 + 128 = 43424
//   total = 2*43424 + 6400 + 64 = 93312
constexpr char kTinyHunyuan[] = R"({
  "model_type": "hunyuan_v1_moe", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 32,
  "vocab_size": 100, "tie_word_embeddings": true, "num_experts": 4, "moe_topk": [2, 2] })";

TEST(RecentReadersTest, HunyuanMoeByHand) {
  ModelConfig m = parse_ok(kTinyHunyuan);
  EXPECT_EQ(m.moe.top_k, 2);
  EXPECT_TRUE(m.moe_layers[0] && m.moe_layers[1]);
  EXPECT_EQ(count_parameters(m).total, 93312);
}

TEST(RecentReadersTest, HunyuanPerLayerTopKMustAgree) {
  std::string json = kTinyHunyuan;
  json.replace(json.find("[2, 2]"), 6, "[2, 3]");
  EXPECT_EQ(parse_error(json).field, "config.moe_topk");
}

// Apertus: L=2, up/down MLP 2*64*96 = 12288 plus xIELU's alpha_p and alpha_n, q/k norms 32.
//   layer = 12288 + 32 + 12288 + 2 + 128 = 24738; total 2*24738 + 12800 + 64 = 62340
TEST(RecentReadersTest, ApertusXieluByHand) {
  ModelConfig m = parse_ok(R"({"model_type": "apertus", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "intermediate_size": 96, "vocab_size": 100, "tie_word_embeddings": false})");
  EXPECT_EQ(m.mlp, MlpKind::kPlain);
  ParamCounts c = count_parameters(m);
  EXPECT_EQ(c.layers[0].mlp, 12288 + 2);
  EXPECT_EQ(c.total, 62340);
}

// Qwen3-VL: a Qwen3 text model (2 layers of 12288 + q/k norms 32 + 18432 + 128 = 30880, so
// 61760 + 12864 = 74624) and Qwen3VLVisionModel h=32 f=48, depth 3, p=4, t=2, merge 2 (w=128),
// out 64, 16 learned positions, DeepStack mergers after blocks 0 and 2:
//   patch 3*2*4*4*32 + 32 = 3104, positions 512,
//   block 2 LayerNorms 128 + qkv 3168 + proj 1056 + fc1 1584 + fc2 1568 = 7504 -> 22512
//   merger MLP 128*128 + 128 + 128*64 + 64 = 24768: merger 64 + 24768, DeepStack 2*(256 + 24768)
//   vision = 101008
TEST(RecentReadersTest, Qwen3VlVisionWithDeepstackByHand) {
  ModelConfig m = parse_ok(R"({"model_type": "qwen3_vl", "tie_word_embeddings": false,
    "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "intermediate_size": 96, "vocab_size": 100, "tie_word_embeddings": false},
    "vision_config": {"depth": 3, "hidden_size": 32, "intermediate_size": 48,
      "in_channels": 3, "patch_size": 4, "spatial_merge_size": 2, "temporal_patch_size": 2,
      "out_hidden_size": 64, "num_position_embeddings": 16,
      "deepstack_visual_indexes": [0, 2]}})");
  EXPECT_EQ(m.vision_params, 101008);
  EXPECT_EQ(count_parameters(m).total, 74624 + 101008);
}

// LLaVA-NeXT: a Mistral text model (2 * 30848 + 12864 = 74560) and CLIP h=32 f=48, 2 layers,
// 28/14 -> 5 positions, features from two layers:
//   class 32 + patch 18816 + positions 160 + pre/post LayerNorms 128
//   + layers 2 * (128 + 4*1056 + 1584 + 1568) = 15008
//   projector linear_1 2*32*64 + 64, linear_2 64*64 + 64, image_newline 64 -> vision 42528
TEST(RecentReadersTest, LlavaNextClipAndProjectorByHand) {
  ModelConfig m = parse_ok(R"({"model_type": "llava_next", "vision_feature_layer": [-2, -5],
    "text_config": {"model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 96,
      "vocab_size": 100, "tie_word_embeddings": false},
    "vision_config": {"model_type": "clip_vision_model", "hidden_size": 32,
      "intermediate_size": 48, "num_hidden_layers": 2, "patch_size": 14, "image_size": 28}})");
  EXPECT_EQ(m.vision_params, 42528);
  EXPECT_EQ(count_parameters(m).total, 74560 + 42528);
}

}  // namespace
}  // namespace vramplan
