// PEFT over transformers 5's stacked experts (peft_experts.h). The parameter counts are PEFT
// 0.21.2's own (get_peft_model over transformers 5.24 models built from the presets with two
// layers, target_modules="all-linear", r = 64, counted with named_parameters()).
#include "training/finetune/peft_experts.h"

#include <gtest/gtest.h>

#include "vramplan/io/scenario_io.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/finetune.h"

namespace vramplan {
namespace {

using nlohmann::json;

json two_layer_lora(const char* model, const char* targets = "all-linear") {
  return {{"model", model},          {"num_layers", 2},
          {"seq_len", 4096},         {"micro_batch", 1},
          {"global_batch", 1},       {"gpus", 1},
          {"finetune", "lora"},      {"lora_rank", 64},
          {"lora_targets", targets}, {"param_dtype", "bf16"},
          {"adapter_dtype", "fp32"}, {"master_weights", false},
          {"flash_attention", true}, {"model_code", "transformers"}};
}

Scenario resolve(const json& settings) {
  Result<ResolvedScenario> r = resolve_scenario(settings, nullptr);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r->scenario : Scenario{};
}

int64_t adapters(const json& settings) {
  const Scenario s = resolve(settings);
  return lora_parameters(s.model, s.finetune, s.conventions.model_code);
}

int64_t row(const Scenario& s, const std::string& component) {
  Result<Estimate> e = estimate(s);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  if (!e.ok()) return -1;
  for (const Row& r : e->stages.front().rows)
    if (r.component == component) return r.bytes;
  return -1;  // absent
}

TEST(PeftExperts, WhichTypesPeftConverts) {
  Scenario s = resolve(two_layer_lora("Mixtral-8x7B-v0.1"));
  EXPECT_EQ(expert_adapters(s.model, ModelCode::kTransformers), ExpertAdapters::kStacked);
  EXPECT_EQ(expert_adapters(s.model, ModelCode::kDefault), ExpertAdapters::kPerExpert);
  s = resolve(two_layer_lora("gpt-oss-20b"));
  EXPECT_EQ(expert_adapters(s.model, ModelCode::kTransformers), ExpertAdapters::kNone);
}

// Mixtral: attention 4 × 64·(in+out) = 1,703,936; router 64·(4096 + 8) = 262,656; gate_up_proj
// at rank 2r over the 8 stacked experts 2·64·8·(4096 + 28672) = 33,554,432; down_proj
// 64·8·(14336 + 4096) = 9,437,184: 44,958,208 per layer.
TEST(PeftExperts, MixtralAllLinearCountsAsPeftDoes) {
  EXPECT_EQ(adapters(two_layer_lora("Mixtral-8x7B-v0.1")), 89'916'416);
  json per_expert = two_layer_lora("Mixtral-8x7B-v0.1");
  per_expert.erase("model_code");  // one adapter per expert's linear, as before transformers 5
  EXPECT_EQ(adapters(per_expert), 60'030'976);
}

TEST(PeftExperts, Qwen3MoeAllLinearCountsAsPeftDoes) {
  EXPECT_EQ(adapters(two_layer_lora("Qwen3-30B-A3B")), 166'084'608);
}

// gpt-oss is not among the converted types: all-linear reaches the attention only.
TEST(PeftExperts, GptOssExpertsGetNoAdapter) {
  EXPECT_EQ(adapters(two_layer_lora("gpt-oss-20b")), 2'654'208);
}

// Each MoE layer keeps its merged (W + s·B·A) expert weights for backward: 8 experts ×
// 3·4096·14336 × 2 B (bf16) per layer, two layers; its adapters keep no per-token copies.
TEST(PeftExperts, MergedExpertWeightsAreKeptPerLayer) {
  const Scenario s = resolve(two_layer_lora("Mixtral-8x7B-v0.1"));
  EXPECT_EQ(row(s, "merged expert weights"), int64_t{2} * 8 * 3 * 4096 * 14336 * 2);
  // attention only (q,k,v,o: r values each, and their fp32 input copies 3·h + h per token)
  EXPECT_EQ(row(s, "adapter activations"), int64_t{4096} * 2 * (64 * 4 + 4 * 4096) * 4);
  Scenario full = s;
  full.training.recompute = Recompute::kFull;  // only the layer being recomputed holds one
  EXPECT_EQ(row(full, "merged expert weights"), int64_t{8} * 3 * 4096 * 14336 * 2);
  const Scenario attention = resolve(two_layer_lora("Mixtral-8x7B-v0.1", "attention"));
  EXPECT_EQ(row(attention, "merged expert weights"), -1);
}

// Experts without adapters need no weight gradient, so transformers' loop over them keeps
// neither the dispatched tokens nor the down projection's input: per MoE layer, n·k tokens ×
// (h + f) × 2 B fewer than when all-linear makes the merged weights require a gradient.
TEST(PeftExperts, FrozenExpertsKeepLess) {
  const Scenario targeted = resolve(two_layer_lora("Mixtral-8x7B-v0.1"));
  const Scenario frozen = resolve(two_layer_lora("Mixtral-8x7B-v0.1", "q,v"));
  const int64_t routed = int64_t{4096} * 2;  // tokens × top-2
  EXPECT_EQ(row(targeted, "activations") - row(frozen, "activations"),
            2 * routed * (4096 + 14336) * 2);
}

// PEFT refuses one half of the fused gate_up_proj (_convert_peft_config_moe).
TEST(PeftExperts, HalfOfTheFusedGateUpIsRefused) {
  Result<ResolvedScenario> r =
      resolve_scenario(two_layer_lora("Qwen3-30B-A3B", "q,v,gate"), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "lora_targets");
  json per_expert = two_layer_lora("Qwen3-30B-A3B", "q,v,gate");
  per_expert.erase("model_code");
  EXPECT_TRUE(resolve_scenario(per_expert, nullptr).ok());
}

// Adapter gradients appear as the backward reaches each adapter: with lazily allocated
// gradients and one microbatch, none exists at the peak at the start of the backward.
TEST(PeftExperts, AdapterGradientsAreAbsentAtABackwardPeak) {
  Scenario s = resolve(two_layer_lora("Mixtral-8x7B-v0.1"));
  s.conventions.lazy_gradients = true;
  EXPECT_EQ(row(s, "adapter gradients"), -1);
  s.conventions.lazy_gradients = false;
  EXPECT_GT(row(s, "adapter gradients"), 0);
}

}  // namespace
}  // namespace vramplan
