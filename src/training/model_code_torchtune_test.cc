// model_code torchtune: what torchtune's modules keep, from its source (torchtune 0.6:
// modules/rms_norm.py, attention.py, position_embeddings.py, loss/ce_chunked_output_loss.py,
// models/<family>/_component_builders.py) and torchao's NF4 dequantisation.
#include <gtest/gtest.h>

#include <string>

#include "model/test_models.h"
#include "training/activations.h"
#include "training/finetune/finetune_rows.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/finetune.h"
#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace {

// One GPU, bf16 everything, lazy gradients: torchtune's single-device recipes.
Scenario torchtune_scenario(const char* preset_name, int64_t layers) {
  Scenario s;
  s.model = testing::preset_model(preset_name, layers);
  s.training.seq_len = 4096;
  s.training.micro_batch = 1;
  s.training.global_batch = 1;
  s.training.param_dtype = DType::kBf16;
  s.training.grad_dtype = DType::kBf16;
  s.training.activation_dtype = DType::kBf16;
  s.training.optimizer_state_dtype = DType::kBf16;
  s.training.master_weights = false;
  s.training.fp32_grad_accumulation = false;
  apply_model_code(ModelCode::kTorchtune, s);
  s.conventions.lazy_gradients = true;
  return s;
}

int64_t row(const Estimate& e, const std::string& component) {
  for (const Row& r : e.stages.front().rows)
    if (r.component == component) return r.bytes;
  return 0;
}

Estimate run(const Scenario& s) {
  Result<Estimate> e = estimate(s);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  return e.ok() ? e.value() : Estimate{};
}

TEST(TorchtuneModelCode, ConventionsOfTheModelCode) {
  const Scenario s = torchtune_scenario("Llama-3.2-1B", 2);
  EXPECT_EQ(s.conventions.gated_mlp_tensors, 4);  // w2(silu(w1·x) * w3·x), unfused
  EXPECT_EQ(s.conventions.loss_bytes_per_logit, 6);
  EXPECT_EQ(s.conventions.loss_chunks, 8);
  // F.rms_norm on the fp32 upcast with a bf16 weight: the fp32 input and normalised value kept
  EXPECT_EQ(norm_keeps(s).per_value, 8);
  EXPECT_EQ(norm_keeps(s).per_token, 4);
  EXPECT_EQ(norm_weight_part(s), 4);
}

TEST(TorchtuneModelCode, ALayerKeepsFp32NormsAndRepeatedKeysAndValues) {
  // Llama 3.2 1B at 4,096 tokens: n = 4096, h = 2048, a = 32, g = 8, d = 64, f = 8192, B = 2.
  const Estimate e = run(torchtune_scenario("Llama-3.2-1B", 2));
  const int64_t n = 4096, h = 2048, a = 32, g = 8, d = 64, f = 8192;
  const int64_t norms = 2 * (n * h * 8 + n * 4);
  const int64_t qkv_input = n * h * 2, mlp_input = n * h * 2;
  const int64_t q_k_v = n * (a + 2 * g) * d * 2;
  const int64_t kv_repeated = n * 2 * (a - g) * d * 2;  // expand + flatten before SDPA
  const int64_t attention_out = n * a * d * 2, lse = n * a * 4;
  const int64_t mlp = 4 * n * f * 2;
  const int64_t layer =
      norms + qkv_input + q_k_v + kv_repeated + attention_out + lse + mlp_input + mlp;
  EXPECT_EQ(row(e, "activations"), 2 * layer);
}

TEST(TorchtuneModelCode, ChunkedLossUpcastsOneChunkAtATime) {
  // Tied Llama 3.2 1B: the forward's loss, 2 + 4 B per logit and one chunk's fp32 upcast.
  const int64_t logits = int64_t{4096} * 128256;
  EXPECT_EQ(row(run(torchtune_scenario("Llama-3.2-1B", 2)), "logits + loss"),
            logits * 6 + logits * 4 / 8);
  // Llama 3.1 8B's untied head (h = 4096): the backward's second chunk holds three V·h weight
  // gradients and 6 of 8 chunks' logit gradients, more than the forward.
  const int64_t head_grad = int64_t{128256} * 4096 * 2;
  EXPECT_EQ(row(run(torchtune_scenario("Llama-3.1-8B", 2)), "logits + loss"),
            logits * 2 * 6 / 8 + 3 * head_grad);
  // Not chunked (loss_chunks 0): the kept bytes only.
  Scenario plain = torchtune_scenario("Llama-3.2-1B", 2);
  plain.conventions.loss_chunks = 0;
  EXPECT_EQ(row(run(plain), "logits + loss"), logits * 6);
}

TEST(TorchtuneModelCode, RopeCachesFollowTheBuilders) {
  // Llama 3.2: one Llama3ScaledRoPE for the model, (131072, 32, 2) fp32 plus theta.
  EXPECT_EQ(row(run(torchtune_scenario("Llama-3.2-1B", 2)), "RoPE cache (torchtune)"),
            int64_t{131072} * 64 * 4 + 32 * 4);
  // Qwen2's LoRA builder: one module per layer, each (131072, 2·128) fp32.
  Scenario lora = torchtune_scenario("Qwen2.5-7B", 2);
  lora.finetune.method = FinetuneMethod::kLora;
  lora.finetune.adapter_dtype = DType::kBf16;
  EXPECT_EQ(row(run(lora), "RoPE cache (torchtune)"), 2 * (int64_t{131072} * 2 * 128 * 4 + 64 * 4));
  // Other model code: no such buffer.
  Scenario hf = torchtune_scenario("Llama-3.2-1B", 2);
  apply_model_code(ModelCode::kTransformers, hf);
  EXPECT_EQ(row(run(hf), "RoPE cache (torchtune)"), 0);
}

TEST(TorchtuneModelCode, TorchaoDequantisesInEagerOps) {
  // Mistral's largest linear, 14,336 × 4,096: int64 indices of both nibbles, the looked-up, the
  // scaled and the stacked bf16 values, 8 + 3·2 B per weight, alive or reserved.
  Scenario s = torchtune_scenario("Mistral-7B-v0.1", 2);
  s.finetune.method = FinetuneMethod::kQlora;
  s.finetune.adapter_dtype = DType::kBf16;
  const Estimate e = run(s);
  EXPECT_EQ(row(e, kDequantizedWeightRow) +
                row(e, "dequantized weight buffer (reserved beside the logits)"),
            int64_t{14336} * 4096 * 14);
}

}  // namespace
}  // namespace vramplan
