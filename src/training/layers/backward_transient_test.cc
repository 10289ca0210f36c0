#include <gtest/gtest.h>

#include "model/test_models.h"
#include "training/activations.h"

namespace vramplan {
namespace {

// Llama-3.1-8B's shape under transformers' model code: n = 4096 tokens, h = 4096, f = 14336,
// bf16 activations and weights.
Scenario transformers_llama() {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = 4096;
  s.conventions.model_code = ModelCode::kTransformers;
  return s;
}

constexpr Wide kN = 4096, kH = 4096, kF = 14336;

TEST(BackwardTransient, DownProjectionWithAnExistingGradientOrTheGatedProduct) {
  const Scenario s = transformers_llama();
  // With .grad there: output gradient + down_proj's input gradient + its weight gradient; the
  // gated product's two input gradients are as large here (n = h) and no larger.
  EXPECT_EQ(layer_backward_transient(s, true, false).bytes,
            kN * kH * 2 + kN * kF * 2 + kH * kF * 2);
  // Without: the gated product's 2·n·f dominates.
  EXPECT_EQ(layer_backward_transient(s, false, false).bytes, kN * kH * 2 + 2 * kN * kF * 2);
}

TEST(BackwardTransient, MoreTokensThanHiddenMakesTheProductTheLarger) {
  Scenario s = transformers_llama();
  s.training.seq_len = 8192;
  const Wide n = 8192;
  EXPECT_EQ(layer_backward_transient(s, true, false).bytes, n * kH * 2 + 2 * n * kF * 2);
}

TEST(BackwardTransient, TensorParallelSplitsTheMlpAndSequenceParallelTheOutputGradient) {
  Scenario s = transformers_llama();
  s.parallel.tp = 4;
  s.parallel.sequence_parallel = true;
  EXPECT_EQ(layer_backward_transient(s, true, false).bytes,
            kN * kH * 2 / 4 + kN * kF * 2 / 4 + kH * kF * 2 / 4);
}

TEST(BackwardTransient, OnlyTransformersDenseLayers) {
  Scenario megatron = transformers_llama();
  megatron.conventions.model_code = ModelCode::kDefault;
  EXPECT_EQ(layer_backward_transient(megatron, true, false).bytes, 0);
  Scenario moe = transformers_llama();
  moe.model.moe.num_experts = 8;
  moe.model.moe.top_k = 2;
  EXPECT_EQ(layer_backward_transient(moe, true, false).bytes, 0);
}

TEST(BackwardTransient, FormulaNamesItsParts) {
  const Term t = layer_backward_transient(transformers_llama(), true, true);
  EXPECT_NE(t.formula.find("output gradient"), std::string::npos);
  EXPECT_NE(t.formula.find("weight gradient before it is added to .grad"), std::string::npos);
  EXPECT_NE(t.formula.find("2·n·f·B/t"), std::string::npos);
}

}  // namespace
}  // namespace vramplan
