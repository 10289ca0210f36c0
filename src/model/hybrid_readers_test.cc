// Hybrid, linear-attention and multimodal configs, worked by hand per layer kind.
#include "model/hybrid_readers.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "model/test_models.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/params.h"
#include "vramplan/model/presets.h"

namespace vramplan {
namespace {

using testing::parse_error;
using testing::parse_ok;

// A tiny Nemotron-H: h=16, pattern "M*-E" (Mamba, attention, MLP, MoE), one norm per block.
//   Mamba-2: H=4 heads of P=8 (d_inner 32), N=4, G=2, K=4 -> conv_dim 32 + 2*2*4 = 48
//     in_proj 16 * (2*32 + 2*2*4 + 4) = 16*84 = 1344, out_proj 32*16 = 512
//     conv 48*4 + bias 48 = 240, dt_bias/A_log/D 3*4 = 12, gated norm 32 -> 2140
//   attention a=2 g=1 d=8: q 16*16 + k,v 2*16*8 + o 16*16 = 768
//   MLP relu² f=24: up 16*24 + down 24*16 = 768
//   MoE E=2 experts f_e=8 k=1, one shared expert of 12: router 2*16 (+2 bias buffer),
//     experts 2*(2*16*8) = 512, shared 2*16*12 = 384
//   norms 4*16 = 64; embedding + head 2*10*16 = 320; final norm 16
//   total = 2140 + 768 + 768 + (32 + 2 + 512 + 384) + 64 + 320 + 16 = 5006
constexpr char kTinyNemotron[] = R"({
  "model_type": "nemotron_h", "hidden_size": 16, "num_hidden_layers": 4,
  "hybrid_override_pattern": "M*-E", "num_attention_heads": 2, "num_key_value_heads": 1,
  "head_dim": 8, "intermediate_size": 24, "mamba_num_heads": 4, "mamba_head_dim": 8,
  "ssm_state_size": 4, "n_groups": 2, "conv_kernel": 4, "vocab_size": 10,
  "n_routed_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 8,
  "moe_shared_expert_intermediate_size": 12, "tie_word_embeddings": false })";

TEST(HybridReadersTest, NemotronBlocksByHand) {
  ModelConfig m = parse_ok(kTinyNemotron);
  ASSERT_EQ(m.layer_mixer.size(), 4u);
  EXPECT_EQ(m.layer_mixer[0], LayerMixer::kMamba2);
  EXPECT_EQ(m.layer_mixer[1], LayerMixer::kAttention);
  EXPECT_EQ(m.layer_mixer[2], LayerMixer::kNone);
  EXPECT_EQ(m.layer_mixer[3], LayerMixer::kNone);
  EXPECT_FALSE(m.has_mlp(0));
  EXPECT_TRUE(m.has_mlp(2));
  EXPECT_FALSE(m.moe_layers[2]);
  EXPECT_TRUE(m.moe_layers[3]);
  ParamCounts c = count_parameters(m);
  EXPECT_EQ(c.layers[0].ssm, 1344 + 512);
  EXPECT_EQ(c.layers[0].ssm_small, 240 + 12 + 32);
  EXPECT_EQ(c.layers[0].total(), 2140 + 16);
  EXPECT_EQ(c.layers[1].total(), 768 + 16);
  EXPECT_EQ(c.layers[2].total(), 768 + 16);
  EXPECT_EQ(c.layers[3].routed_experts, 512);
  EXPECT_EQ(c.layers[3].mlp, 384);
  EXPECT_EQ(c.layers[3].buffers, 2);
  EXPECT_EQ(c.total, 5006);
  EXPECT_EQ(c.active, 5006 - 256);
}

// A tiny Qwen3-Next: h=16, 2 layers (DeltaNet, then gated attention), MoE everywhere.
//   DeltaNet Hk=2 dk=4 (k=8), Hv=4 dv=4 (v=16), K=4:
//     in_proj_qkvz 16*(2*8 + 2*16) = 768, in_proj_ba 16*2*4 = 128, out_proj 16*16 = 256
//     conv (2*8+16)*4 = 128, dt_bias + A_log 8, norm 4 -> 1292
//   gated attention a=2 g=1 d=8: q 16*2*16 = 512 (query + gate), k,v 2*16*8 = 256,
//     o 16*16 = 256, q/k norms 16 -> 1040
//   MoE E=4 f_e=4 k=2 + one shared expert f=8 with its gate Linear(16, 1):
//     router 64 + gate 16, experts 4*3*16*4 = 768, shared 3*16*8 = 384 -> 1232
//   norms 2*16 per layer; embedding + head 2*10*16 = 320; final norm 16
//   total = 1292 + 1040 + 2*(1232 + 32) + 320 + 16 = 5196; active = 5196 - 2*2*192 = 4428
constexpr char kTinyQwen3Next[] = R"({
  "model_type": "qwen3_next", "hidden_size": 16, "num_hidden_layers": 2,
  "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 32,
  "linear_num_key_heads": 2, "linear_key_head_dim": 4, "linear_num_value_heads": 4,
  "linear_value_head_dim": 4, "linear_conv_kernel_dim": 4, "full_attention_interval": 2,
  "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 4,
  "shared_expert_intermediate_size": 8, "vocab_size": 10, "tie_word_embeddings": false })";

TEST(HybridReadersTest, Qwen3NextDeltaNetAndGatedAttentionByHand) {
  ModelConfig m = parse_ok(kTinyQwen3Next);
  ASSERT_EQ(m.layer_mixer.size(), 2u);
  EXPECT_EQ(m.layer_mixer[0], LayerMixer::kGatedDeltaNet);
  EXPECT_EQ(m.layer_mixer[1], LayerMixer::kAttention);
  ParamCounts c = count_parameters(m);
  EXPECT_EQ(c.layers[0].ssm + c.layers[0].ssm_small, 1292);
  EXPECT_EQ(c.layers[1].attention + c.layers[1].attention_replicated, 1040);
  EXPECT_EQ(c.layers[1].router, 64 + 16);
  EXPECT_EQ(c.total, 5196);
  EXPECT_EQ(c.active, 4428);
}

TEST(HybridReadersTest, Qwen3NextLayerTypesOverrideTheInterval) {
  std::string json = kTinyQwen3Next;
  json.insert(json.size() - 1, R"(, "layer_types": ["full_attention", "linear_attention"])");
  ModelConfig m = parse_ok(json);
  EXPECT_EQ(m.layer_mixer[0], LayerMixer::kAttention);
  EXPECT_EQ(m.layer_mixer[1], LayerMixer::kGatedDeltaNet);
}

// Granite-4.0-H: every layer has the MoE and the shared MLP after its mixer; with no experts
// the shared MLP (shared_intermediate_size) is the dense MLP.
TEST(HybridReadersTest, GraniteHybridDenseAndMoe) {
  const std::string base = R"({
    "model_type": "granitemoehybrid", "hidden_size": 16, "num_hidden_layers": 2,
    "layer_types": ["mamba", "attention"], "num_attention_heads": 2, "num_key_value_heads": 2,
    "intermediate_size": 4, "shared_intermediate_size": 8, "mamba_n_heads": 4,
    "mamba_d_head": 8, "mamba_d_state": 4, "mamba_n_groups": 1, "mamba_d_conv": 4,
    "vocab_size": 10, "tie_word_embeddings": true)";
  ModelConfig dense = parse_ok(base + ", \"num_local_experts\": 0}");
  EXPECT_FALSE(dense.is_moe());
  EXPECT_EQ(dense.ffn, 8);
  ParamCounts d = count_parameters(dense);
  // Mamba-2 H=4 P=8 N=4 G=1: in_proj 16*(64+8+4) = 1216, out 512, conv 40*4+40 = 200, 12, 32.
  EXPECT_EQ(d.layers[0].ssm + d.layers[0].ssm_small, 1216 + 512 + 200 + 12 + 32);
  EXPECT_EQ(d.layers[0].mlp, 3 * 16 * 8);
  ModelConfig moe = parse_ok(base + R"(, "num_local_experts": 4, "num_experts_per_tok": 2})");
  ParamCounts e = count_parameters(moe);
  EXPECT_EQ(e.layers[0].routed_experts, 4 * 3 * 16 * 4);
  EXPECT_EQ(e.layers[0].mlp, 3 * 16 * 8);  // the shared MLP
  EXPECT_EQ(e.layers[1].routed_experts, 4 * 3 * 16 * 4);
}

TEST(HybridReadersTest, BadLayerKindsNameTheField) {
  std::string json = kTinyNemotron;
  json.replace(json.find("M*-E"), 4, "M*-X");
  Error e = parse_error(json);
  EXPECT_EQ(e.field, "config.hybrid_override_pattern");
  json = kTinyNemotron;
  json.replace(json.find("M*-E"), 4, "M*-");
  EXPECT_EQ(parse_error(json).field, "config.hybrid_override_pattern");
  std::string qwen = kTinyQwen3Next;
  qwen.insert(qwen.size() - 1, R"(, "layer_types": ["full_attention", "mamba"])");
  e = parse_error(qwen);
  EXPECT_EQ(e.field, "config.layer_types");
  EXPECT_EQ(e.value, "\"mamba\"");
}

TEST(HybridReadersTest, PresetsReadTheirLayerKinds) {
  ModelConfig nemotron = parse_ok(find_preset("Nemotron-H-8B-Base-8K")->config);
  int mamba = 0, attention = 0, mlp_only = 0;
  for (size_t i = 0; i < nemotron.layer_mixer.size(); ++i) {
    mamba += nemotron.layer_mixer[i] == LayerMixer::kMamba2;
    attention += nemotron.layer_mixer[i] == LayerMixer::kAttention;
    mlp_only += nemotron.layer_mixer[i] == LayerMixer::kNone;
  }
  EXPECT_EQ(mamba, 24);
  EXPECT_EQ(attention, 4);
  EXPECT_EQ(mlp_only, 24);
  ModelConfig next = parse_ok(find_preset("Qwen3-Next-80B-A3B-Instruct")->config);
  EXPECT_EQ(next.layer_mixer[3], LayerMixer::kAttention);
  EXPECT_EQ(next.layer_mixer[4], LayerMixer::kGatedDeltaNet);
  EXPECT_TRUE(next.is_hybrid());
  ModelConfig v32 = parse_ok(find_preset("DeepSeek-V3.2-Exp")->config);
  EXPECT_EQ(v32.indexer.num_heads, 64);
  EXPECT_EQ(count_parameters(v32).layers[0].indexer, 13959424);
}

// Multimodal wrappers: the language model from text_config, the vision tower counted apart.
TEST(HybridReadersTest, VisionTowersCountedApart) {
  ParamCounts mistral =
      count_parameters(parse_ok(find_preset("Mistral-Small-3.1-24B-Instruct-2503")->config));
  // Pixtral: patch conv 3*14*14*1024 + ln_pre 1024 + 24 * (2*1024 + 4*1024² + 3*1024*4096);
  // projector: norm 1024 + merger 4096*1024 + linear_1 1024*5120 + linear_2 5120².
  EXPECT_EQ(mistral.vision,
            602112 + 1024 + 24 * (2048 + 4194304 + 12582912) + 1024 + 4194304 + 5242880 + 26214400);
  EXPECT_EQ(mistral.total - mistral.vision, 23572403200);
  ParamCounts qwen_vl = count_parameters(parse_ok(find_preset("Qwen2.5-VL-7B-Instruct")->config));
  EXPECT_EQ(qwen_vl.total - qwen_vl.vision, 7615616512);  // Qwen2.5-7B, text at the top level
}

TEST(HybridReadersTest, UncountedVisionTowerIsAWarningNotASilentZero) {
  Result<ParsedModel> parsed = parse_hf_config(R"({
    "model_type": "llava_next", "vision_config": {"model_type": "siglip_vision_model"},
    "text_config": {"model_type": "qwen3", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "intermediate_size": 128, "vocab_size": 100}})",
                                               "vl");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->model.vision_params, 0);
  bool warned = false;
  for (const std::string& w : parsed->warnings) warned |= w.find("vision tower") != w.npos;
  EXPECT_TRUE(warned);
  EXPECT_TRUE(parsed->model.qk_norm);  // text_config's own model_type: Qwen3
}

TEST(HybridReadersTest, WrapperWithoutTextConfigNamesIt) {
  Error e = parse_error(R"({"model_type": "mistral3", "vision_config": {}})");
  EXPECT_EQ(e.field, "config.text_config");
}

}  // namespace
}  // namespace vramplan
