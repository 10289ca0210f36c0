#include "vramplan/quick/quick.h"

#include <gtest/gtest.h>

#include <cmath>

#include "training/activations.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/params.h"
#include "vramplan/model/presets.h"

namespace vramplan {
namespace {

// issue 21's "medium transformer training": 700M, bf16 weights, fp32 gradients, 8 × 2048,
// 32 layers × 4096.
QuickInputs medium() {
  QuickInputs in;
  in.params = 700'000'000;
  in.layers = 32;
  in.hidden = 4096;
  in.batch = 8;
  in.seq_len = 2048;
  in.grad_dtype = DType::kFp32;
  return in;
}

int64_t row(const QuickEstimate& e, const std::string& component) {
  for (const Row& r : e.rows)
    if (r.component == component) return r.bytes;
  ADD_FAILURE() << "no row " << component;
  return -1;
}

QuickEstimate run(const QuickInputs& in) {
  Result<QuickEstimate> e = quick_estimate(in);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  return e.ok() ? e.value() : QuickEstimate{};
}

TEST(Quick, TrainingRowsFollowTheirFormulas) {
  QuickInputs in = medium();
  in.activation_multiplier = 10;
  const QuickEstimate e = run(in);
  const int64_t P = 700'000'000;
  EXPECT_EQ(row(e, "weights"), 2 * P);
  EXPECT_EQ(row(e, "master weights"), 4 * P);
  EXPECT_EQ(row(e, "gradients"), 4 * P);
  EXPECT_EQ(row(e, "optimizer states"), 8 * P);  // AdamW m and v in fp32
  EXPECT_EQ(row(e, "activations"), int64_t{8} * 2048 * 4096 * 32 * 10 * 2);
  EXPECT_EQ(row(e, "KV cache"), 0);
  const int64_t tensors = 18 * P + int64_t{8} * 2048 * 4096 * 32 * 10 * 2;
  EXPECT_EQ(row(e, "overhead"), (int64_t{600} << 20) + std::llround(0.1 * tensors));
  int64_t sum = 0;
  for (const Row& r : e.rows) {
    sum += r.bytes;
    EXPECT_FALSE(r.formula.empty()) << r.component;
    EXPECT_FALSE(r.source.empty()) << r.component;
  }
  EXPECT_EQ(e.total_bytes, sum);
  EXPECT_EQ(e.rows.size(), 7u);
  EXPECT_EQ(e.multiplier_source, "given");
}

TEST(Quick, FormulasShowTheirValues) {
  QuickInputs in = medium();
  in.activation_multiplier = 10;
  const QuickEstimate e = run(in);
  EXPECT_EQ(e.rows[0].formula, "P·bits/8 = 700,000,000·16/8 (bf16)");
  EXPECT_NE(e.rows[4].formula.find("8·2,048·4,096·32·10·2"), std::string::npos)
      << e.rows[4].formula;
}

TEST(Quick, InferenceKeepsOneLayerAndTheCache) {
  QuickInputs in = medium();
  in.mode = QuickMode::kInference;
  in.weights.format = WeightFormat::kInt8;
  in.kv_cache = true;
  in.batch = 4;
  in.seq_len = 1024;
  in.activation_multiplier = 10;
  const QuickEstimate e = run(in);
  EXPECT_EQ(row(e, "weights"), 700'000'000);  // int8, per-channel scales left out
  EXPECT_EQ(row(e, "master weights"), 0);
  EXPECT_EQ(row(e, "gradients"), 0);
  EXPECT_EQ(row(e, "optimizer states"), 0);
  EXPECT_EQ(row(e, "activations"), int64_t{4} * 1024 * 4096 * 10 * 2);  // L·(1/L)
  EXPECT_EQ(row(e, "KV cache"), int64_t{4} * 1024 * 4096 * 32 * 2 * 2);
}

TEST(Quick, CacheTokensAndDtype) {
  QuickInputs in = medium();
  in.kv_cache = true;
  in.cache_tokens = 4096;
  in.kv_dtype = DType::kFp8;
  in.activation_multiplier = 1;
  EXPECT_EQ(row(run(in), "KV cache"), int64_t{8} * 4096 * 4096 * 32 * 2);
}

TEST(Quick, CheckpointFactorScalesActivationsOnly) {
  QuickInputs in = medium();
  in.activation_multiplier = 12;
  const QuickEstimate full = run(in);
  in.checkpoint_factor = 0.25;
  const QuickEstimate checkpointed = run(in);
  EXPECT_EQ(row(checkpointed, "activations") * 4, row(full, "activations"));
  EXPECT_EQ(row(checkpointed, "optimizer states"), row(full, "optimizer states"));
}

TEST(Quick, QuantisedWeightsCountTheirScales) {
  QuickInputs in = medium();
  in.weights.format = WeightFormat::kInt4;
  in.activation_multiplier = 1;
  // AWQ/GPTQ int4 with groups of 128: 4 bits + 16-bit scale and 4-bit zero per 128.
  EXPECT_EQ(row(run(in), "weights"),
            static_cast<int64_t>(std::ceil(700'000'000 * (4 + 20.0 / 128) / 8)));
}

TEST(Quick, OptimizersFollowTheFullModelsAccounting) {
  QuickInputs in = medium();
  in.activation_multiplier = 1;
  in.optimizer = Optimizer::kSgd;
  EXPECT_EQ(row(run(in), "optimizer states"), 0);
  in.optimizer = Optimizer::kSgdMomentum;
  EXPECT_EQ(row(run(in), "optimizer states"), 4 * in.params);
  in.optimizer = Optimizer::kAdamW;
  in.optimizer_dtype = DType::kBf16;
  EXPECT_EQ(row(run(in), "optimizer states"), 4 * in.params);
  in.master_weights = false;
  EXPECT_EQ(row(run(in), "master weights"), 0);
}

TEST(Quick, MatchingArchitectureIsLlama2) {
  // 32 × 4096 is Llama-2-7B and 40 × 5120 Llama-2-13B, parameter for parameter.
  Result<nlohmann::json> config = matching_config(32, 4096, 2048);
  ASSERT_TRUE(config.ok());
  Result<ParsedModel> ours = parse_hf_config(config->dump(), "m");
  const Preset* preset = find_preset("Llama-2-7b");
  ASSERT_NE(preset, nullptr);
  Result<ParsedModel> theirs = parse_hf_config(preset->config, "Llama-2-7b");
  ASSERT_TRUE(ours.ok() && theirs.ok());
  EXPECT_EQ(count_parameters(ours->model).total, count_parameters(theirs->model).total);
  EXPECT_EQ(count_parameters(ours->model).total, 6'738'415'616);
  Result<nlohmann::json> large = matching_config(40, 5120, 4096);
  ASSERT_TRUE(large.ok());
  EXPECT_EQ((*large)["intermediate_size"], 13824);
  EXPECT_EQ((*large)["num_attention_heads"], 40);
}

TEST(Quick, DefaultMultiplierIsTheLayersOwnAccounting) {
  const QuickInputs in = medium();
  Result<Scenario> s = matching_training_scenario(in);
  ASSERT_TRUE(s.ok());
  const double layer = static_cast<double>(layer_activations(*s, false, false).bytes);
  const QuickEstimate e = run(in);
  EXPECT_NEAR(e.activation_multiplier, layer / (8.0 * 2048 * 4096 * 2), 1e-9);
  EXPECT_NE(e.multiplier_source.find("derived"), std::string::npos);
  // The activations row is then L times the layer's bytes.
  EXPECT_NEAR(static_cast<double>(row(e, "activations")), 32 * layer, 1.0);
  // With flash attention a layer keeps a fixed number of h-wide tensors per token: the same
  // multiplier at another batch and sequence length (to the per-head softmax statistics).
  QuickInputs other = in;
  other.batch = 1;
  other.seq_len = 8192;
  EXPECT_NEAR(run(other).activation_multiplier, e.activation_multiplier, 0.05);
  EXPECT_GT(e.activation_multiplier, 10);
  EXPECT_LT(e.activation_multiplier, 40);
}

TEST(Quick, ErrorsNameTheSetting) {
  QuickInputs in = medium();
  in.checkpoint_factor = 0;
  Result<QuickEstimate> e = quick_estimate(in);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "checkpoint_factor");
  in = medium();
  in.activation_multiplier = -1;
  e = quick_estimate(in);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "activation_multiplier");
  in = medium();
  in.hidden = 1000;  // no heads of 128: no matching architecture for the default
  e = quick_estimate(in);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "hidden");
  in.activation_multiplier = 16;
  EXPECT_TRUE(quick_estimate(in).ok());
  in = medium();
  in.batch = 0;
  e = quick_estimate(in);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "batch");
}

TEST(Quick, OverflowIsAnErrorNotAWrap) {
  QuickInputs in = medium();
  in.activation_multiplier = 1000;
  in.batch = 1'000'000;
  in.seq_len = 100'000'000;
  in.hidden = 65536;
  in.layers = 1024;
  Result<QuickEstimate> e = quick_estimate(in);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "batch");
}

}  // namespace
}  // namespace vramplan
