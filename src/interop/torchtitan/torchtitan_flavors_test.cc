#include "interop/torchtitan/torchtitan_flavors.h"

#include <gtest/gtest.h>

#include "interop/torchtitan/torchtitan_emit_checks.h"
#include "interop/torchtitan/torchtitan_layout.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/params.h"
#include "vramplan/model/presets.h"

namespace vramplan::interop {
namespace {

ModelConfig built(const TitanFlavor& f) {
  Result<ParsedModel> m = parse_hf_config(titan_model_config(f, 8192).dump(), f.flavor);
  EXPECT_TRUE(m.ok()) << f.model << " " << f.flavor << ": " << (m ? "" : m.error().message());
  return m ? m->model : ModelConfig{};
}

ModelConfig preset(const std::string& name) {
  const Preset* p = find_preset(name);
  EXPECT_NE(p, nullptr) << name;
  Result<ParsedModel> m = parse_hf_config(p->config, p->name);
  EXPECT_TRUE(m.ok());
  return m ? m->model : ModelConfig{};
}

TEST(TitanFlavors, EveryFlavorBuildsAValidModel) {
  for (const TitanFlavor& f : titan_flavors()) {
    const ModelConfig m = built(f);
    EXPECT_EQ(m.num_layers, f.n_layers) << f.flavor;
    EXPECT_GT(count_parameters(m).total, 0) << f.flavor;
  }
}

TEST(TitanFlavors, APresetIsItsFlavorExactly) {
  // Parameter for parameter, and the emitter finds the flavor back from the preset's model.
  for (const TitanFlavor& f : titan_flavors()) {
    if (f.preset == nullptr) continue;
    const ModelConfig p = preset(f.preset);
    EXPECT_EQ(count_parameters(built(f)).total, count_parameters(p).total) << f.flavor;
    const TitanFlavor* back = titan_flavor_of_model(p);
    ASSERT_NE(back, nullptr) << f.preset;
    EXPECT_STREQ(back->preset, f.preset);
  }
}

TEST(TitanFlavors, Llama3FeedForwardWidths) {
  // FeedForward: 4·dim → int(2/3·) → × ffn_dim_multiplier → up to multiple_of.
  EXPECT_EQ(built(*find_titan_flavor("llama3", "8B")).ffn, 14336);
  EXPECT_EQ(built(*find_titan_flavor("llama3", "70B")).ffn, 28672);
  EXPECT_EQ(built(*find_titan_flavor("llama3", "405B")).ffn, 53248);
  EXPECT_EQ(built(*find_titan_flavor("llama3", "debugmodel")).ffn, 768);
}

TEST(TitanFlavors, Llama4ScoutHasItsExpertsAndSharedExpert) {
  const ModelConfig m = built(*find_titan_flavor("llama4", "17bx16e"));
  EXPECT_EQ(m.moe.num_experts, 16);
  EXPECT_EQ(m.moe.top_k, 1);
  // int(2·4·5120/3) = 13653, × 1.2 = 16383, / (top-1 + 1 shared) = 8191, up to 2048: 8192.
  EXPECT_EQ(m.moe.expert_ffn, 8192);
  EXPECT_EQ(m.moe.shared_experts * m.moe.shared_expert_ffn, 8192);
  EXPECT_TRUE(std::all_of(m.moe_layers.begin(), m.moe_layers.end(), [](bool b) { return b; }));
  EXPECT_FALSE(m.tied_embeddings);
  // Maverick interleaves: (layer_id + 1) % 2 == 0 are MoE.
  const ModelConfig maverick = built(*find_titan_flavor("llama4", "17bx128e"));
  EXPECT_FALSE(maverick.moe_layers[0]);
  EXPECT_TRUE(maverick.moe_layers[1]);
  EXPECT_EQ(maverick.ffn, 16384);
}

TEST(TitanFlavors, DeepSeek671BIsDeepSeekV3WithoutMtpOrRoutingBias) {
  ModelConfig v3 = preset("DeepSeek-V3");
  v3.mtp_layers = 0;
  v3.moe.router_correction_bias = false;
  const ModelConfig titan = built(*find_titan_flavor("deepseek_v3", "671B"));
  EXPECT_EQ(count_parameters(titan).total, count_parameters(v3).total);
  EXPECT_EQ(titan.mtp_layers, 0);
  EXPECT_EQ(titan_flavor_of_model(preset("DeepSeek-V3")), nullptr);
}

TEST(TitanFlavors, NamesForErrors) {
  EXPECT_EQ(titan_model_names(), "llama3, llama4, deepseek_v3, qwen3");
  EXPECT_NE(titan_flavor_names("qwen3").find("235B-A22B"), std::string::npos);
  EXPECT_EQ(find_titan_flavor("llama3", "7B"), nullptr);
  EXPECT_STREQ(titan_flavor_of_preset("Llama-3.1-70B")->flavor, "70B");
}

TEST(TitanLayout, StagesSplitAsGenerateLlmFqnPerModelPart) {
  // 126 layers + embedding + output = 128 effective over 8 stages of 16: the first and last
  // hold 15 decoder layers.
  EXPECT_EQ(titan_rank_layers(126, 8, 1, 1, 1, false),
            (std::vector<int64_t>{15, 16, 16, 16, 16, 16, 16, 15}));
  // Interleaved, 16 stages of 8: rank 0 holds stages 0 and 8 (7 + 8).
  EXPECT_EQ(titan_rank_layers(126, 8, 2, 1, 1, false).front(), 15);
  // 34 effective layers over 4 stages: 9, 9, 8, 8 with the weights taken off the ends.
  EXPECT_EQ(titan_rank_layers(32, 4, 1, 1, 1, false), (std::vector<int64_t>{8, 9, 8, 7}));
  // More stages than layers: torchtitan raises.
  EXPECT_TRUE(titan_rank_layers(2, 8, 1, 1, 1, false).empty());
}

TEST(TitanLayout, EveryNthLayer) {
  EXPECT_EQ(titan_every_nth({32}, 1, 2).layers_per_chunk, 16);
  EXPECT_TRUE(titan_every_nth({32}, 1, 3).exact);
  EXPECT_EQ(titan_every_nth({32}, 1, 3).layers_per_chunk, 10);
  EXPECT_EQ(titan_every_nth({3}, 1, 4).layers_per_chunk, 0);  // no layer reaches the 4th
  // Ranks of 15 and 16 layers checkpoint 7 and 8: one count per chunk cannot give both.
  EXPECT_FALSE(titan_every_nth({15, 16, 16, 15}, 1, 2).exact);
  EXPECT_TRUE(titan_every_nth({16, 16}, 2, 2).exact);
  EXPECT_EQ(titan_every_nth({16, 16}, 2, 2).layers_per_chunk, 4);
}

TEST(TitanLayout, SchedulesByName) {
  ASSERT_NE(find_titan_schedule("interleaved1f1b"), nullptr);
  EXPECT_TRUE(find_titan_schedule("Interleaved1F1B")->multi_stage);
  EXPECT_STREQ(find_titan_schedule("GPipe")->vramplan, "gpipe");
  EXPECT_FALSE(find_titan_schedule("ZBVZeroBubble")->modelled);
  EXPECT_EQ(find_titan_schedule("Looped"), nullptr);
}

}  // namespace
}  // namespace vramplan::interop
