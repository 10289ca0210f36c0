#include "vramplan/serving/inference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "serving/inference_weights.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"

namespace vramplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A preset with the weight formats its config.json states, on an H100 as vLLM sees it.
InferenceScenario preset(const char* name) {
  const Preset* p = find_preset(name);
  EXPECT_NE(p, nullptr) << name;
  Result<ParsedModel> parsed = parse_hf_config(p->config, p->name);
  EXPECT_TRUE(parsed.ok());
  InferenceScenario s;
  s.model = parsed->model;
  Result<QuantizationConfig> qc =
      read_quantization_config(parsed->quantization_config, serving_dtype(parsed->torch_dtype));
  EXPECT_TRUE(qc.ok());
  s.weights = qc->formats;
  s.gpu_total_bytes = static_cast<int64_t>(79.18 * kGiB);
  return s;
}

InferenceEstimate run(const InferenceScenario& s) {
  Result<InferenceEstimate> e = estimate_inference(s);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  return e.ok() ? e.value() : InferenceEstimate{};
}

int64_t row(const InferenceEstimate& e, const std::string& prefix) {
  int64_t sum = 0;
  for (const Row& r : e.rows)
    if (r.component.rfind(prefix, 0) == 0) sum += r.bytes;
  return sum;
}

double gib(int64_t bytes) { return static_cast<double>(bytes) / kGiB; }

TEST(KvCache, GqaPerTokenIsTwoLayersHeadsDimBytes) {
  // Llama-3-8B: 2 (K, V) · 32 layers · 8 KV heads · 128 · 2 B = 131,072 B per token.
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 8192;
  InferenceEstimate e = run(s);
  EXPECT_EQ(e.kv_bytes_per_token, 131'072);
  EXPECT_EQ(e.kv_bytes_per_sequence, 131'072 * 8192);
  // TP 2 halves the heads per GPU; TP 16 over 8 KV heads keeps one (replicated) head each.
  s.tp = 2;
  EXPECT_EQ(run(s).kv_bytes_per_token, 65'536);
  s.tp = 16;
  s.model.num_heads = 32;
  EXPECT_EQ(run(s).kv_bytes_per_token, 2 * 32 * 1 * 128 * 2);
}

TEST(KvCache, DtypesAndQuantisationScales) {
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 4096;
  s.kv_dtype = KvDtype::kFp8;
  EXPECT_EQ(run(s).kv_bytes_per_token, 65'536);
  // int8/int4 keep an fp16 scale and zero per token and head for K and V:
  // int4: 2 · 32 · 8 · (128/2 + 4) = 34,816 B.
  s.kv_dtype = KvDtype::kInt4;
  EXPECT_EQ(run(s).kv_bytes_per_token, 2 * 32 * 8 * (64 + 4));
  s.kv_dtype = KvDtype::kInt8;
  EXPECT_EQ(run(s).kv_bytes_per_token, 2 * 32 * 8 * (128 + 4));
}

TEST(KvCache, MlaCachesTheLatentOnEveryTpRank) {
  // DeepSeek-V3: (512 latent + 64 rope) · 61 layers · 2 B = 70,272 B per token, not split by TP.
  InferenceScenario s = preset("DeepSeek-V3");
  s.context = 4096;
  EXPECT_EQ(run(s).kv_bytes_per_token, 70'272);
  s.tp = 8;
  EXPECT_EQ(run(s).kv_bytes_per_token, 70'272);
}

TEST(KvCache, SlidingLayersAreCappedAtTheWindow) {
  // Gemma-2-9B: 42 layers alternate sliding (window 4096) and full; 2·8·256·2 = 8,192 B per
  // layer-token. At 8,192 tokens: 21 × 8,192 + 21 × 4,096 layer-tokens.
  InferenceScenario s = preset("gemma-2-9b");
  s.context = 8192;
  InferenceEstimate e = run(s);
  EXPECT_EQ(e.kv_bytes_per_token, 42 * 8192);
  EXPECT_EQ(e.kv_bytes_per_sequence, int64_t{8192} * (21 * 8192 + 21 * 4096));
  // Below the window every layer keeps every token.
  s.context = 2048;
  EXPECT_EQ(run(s).kv_bytes_per_sequence, int64_t{8192} * 42 * 2048);
}

TEST(KvCache, Gemma3FiveSlidingToOneFull) {
  // Gemma-3-27B: 62 layers, every 6th full (10 full, 52 sliding, window 1024); 16 KV heads of
  // 128: 2·16·128·2 = 8,192 B per layer-token.
  InferenceScenario s = preset("gemma-3-27b");
  s.context = 32768;
  EXPECT_EQ(run(s).kv_bytes_per_sequence, int64_t{8192} * (10 * 32768 + 52 * 1024));
}

TEST(KvCache, GptOssAlternatesA128TokenWindow) {
  // gpt-oss-20b: 24 layers alternate sliding (128) and full; 2·8·64·2 = 2,048 B per
  // layer-token. 8,192 tokens: 2,048 × (12 × 8,192 + 12 × 128).
  InferenceScenario s = preset("gpt-oss-20b");
  s.context = 8192;
  EXPECT_EQ(run(s).kv_bytes_per_sequence, int64_t{2048} * (12 * 8192 + 12 * 128));
}

TEST(KvCache, PagedBlocksRoundTokensUp) {
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 1000;  // 63 blocks of 16 = 1,008 tokens
  EXPECT_EQ(run(s).kv_bytes_per_sequence, 131'072 * 1008);
  s.block_size = 1;
  EXPECT_EQ(run(s).kv_bytes_per_sequence, 131'072 * 1000);
}

TEST(InferenceWeights, BfloatWeightsAreTheHubCountTimesTwo) {
  // Llama-3.1-8B: 8,030,261,248 params × 2 B, plus the rotary cache 131,072 × 128 × 2 B.
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 8192;
  InferenceEstimate e = run(s);
  EXPECT_EQ(e.weights_bytes, int64_t{2} * 8'030'261'248 + int64_t{131072} * 128 * 2);
  EXPECT_EQ(row(e, "rotary"), int64_t{131072} * 128 * 2);
}

TEST(InferenceWeights, TensorParallelShardsLinearsAndVocab) {
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 8192;
  const int64_t one = run(s).weights_bytes - row(run(s), "rotary");
  s.tp = 4;
  InferenceEstimate e = run(s);
  // Everything but the norms (replicated) divides by 4.
  const int64_t norms = row(e, "norms");
  EXPECT_EQ(e.weights_bytes - row(e, "rotary") - norms, (one - norms) / 4);
}

TEST(InferenceWeights, PipelineRanksSplitLayersLikeVllm) {
  // 32 layers over pp 3: 11, 11, 10 (the remainder goes to the ranks before the last).
  const std::vector<ServingRank> ranks = serving_ranks(32, 3);
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks[0].layers.size(), 11u);
  EXPECT_EQ(ranks[1].layers.size(), 11u);
  EXPECT_EQ(ranks[2].layers.size(), 10u);
  EXPECT_TRUE(ranks[0].first && ranks[2].last);
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 8192;
  s.pp = 3;
  InferenceEstimate e = run(s);
  ASSERT_EQ(e.ranks.size(), 3u);
  EXPECT_EQ(e.ranks[0].kv_bytes_per_token, 11 * 4096);
  EXPECT_EQ(e.ranks[2].kv_bytes_per_token, 10 * 4096);
}

TEST(InferenceWeights, QuantisedClassesKeepNormsAndEmbeddingsInBase) {
  // gpt-oss-20b: routed experts MXFP4 (4.25 bits), attention, embedding and head bf16.
  InferenceScenario s = preset("gpt-oss-20b");
  s.context = 8192;
  InferenceEstimate e = run(s);
  const int64_t experts = int64_t{24} * 32 * 3 * 2880 * 2880;  // 24 layers × 32 × gate|up|down
  EXPECT_EQ(row(e, "expert weights"), experts / 2 + experts / 32);
  EXPECT_EQ(row(e, "embedding"), int64_t{201088} * 2880 * 2);
  // Everything together is the parameter count with experts at 4.25 bits, the rest at 2 B.
  const int64_t rest = e.parameters.total - experts;
  EXPECT_EQ(e.weights_bytes - row(e, "rotary"), experts / 2 + experts / 32 + 2 * rest);
}

TEST(InferenceWeights, ExpertParallelSplitsWholeExperts) {
  InferenceScenario s = preset("Qwen3-30B-A3B");
  s.context = 4096;
  s.tp = 4;
  const int64_t tp_only = row(run(s), "expert weights");
  s.ep = 4;  // the same GPUs: whole experts over 4 ranks instead of each expert over 4
  EXPECT_EQ(row(run(s), "expert weights"), tp_only);
  s.dp = 2;
  s.ep = 8;  // EP over tp·dp = 8: half the experts per GPU again
  EXPECT_EQ(row(run(s), "expert weights"), tp_only / 2);
}

// vLLM PR #10511's log for meta-llama/Meta-Llama-3-8B on one H100 (vLLM 0.6.5): total 79.22 GiB,
// utilization 0.90 → 71.29 GiB; weights 14.96 GiB; non_torch 1.79 GiB; activation peak 1.26 GiB;
// KV 53.29 GiB. V0's profile: 256 sequences, 8,192 batched tokens.
TEST(VllmReproduction, MetaLlama3_8BOnOneH100) {
  InferenceScenario s = preset("Llama-3.1-8B");
  s.model.max_position_embeddings = 8192;  // Meta-Llama-3-8B: same shape, 8k positions
  s.context = 8192;
  s.gpu_total_bytes = static_cast<int64_t>(79.22 * kGiB);
  s.gpu_memory_utilization = 0.9;
  s.max_num_seqs = 256;
  s.max_num_batched_tokens = 8192;
  InferenceEstimate e = run(s);
  ASSERT_TRUE(e.capacity.has_value());
  EXPECT_NEAR(gib(e.capacity->requested_bytes), 71.29, 0.01);  // 79.22 is itself rounded
  EXPECT_NEAR(gib(e.weights_bytes), 14.96, 0.005);
  EXPECT_NEAR(gib(e.activation_bytes), 1.26, 0.05);
  // With the non-torch memory that version logged, the budget is vLLM's to within rounding.
  s.overheads.non_torch_bytes = static_cast<int64_t>(1.79 * kGiB);
  InferenceEstimate logged = run(s);
  EXPECT_NEAR(gib(logged.capacity->kv_budget_bytes), 53.29, 0.06);
  // Whole blocks of 16 tokens × 131,072 B.
  EXPECT_EQ(logged.capacity->max_kv_tokens % 16, 0);
  EXPECT_EQ(logged.capacity->max_kv_tokens, logged.capacity->kv_budget_bytes / (16 * 131'072) * 16);
  EXPECT_EQ(logged.capacity->max_sequences, logged.capacity->max_kv_tokens / 8192);
}

// llm-d-benchmark's vLLM V1 logs on H100 (79.18 GiB): Llama-3.1-8B weights 14.99, activation
// 4.76, non-torch 0.13, KV 51.38 GiB at 0.9 (1,024 sequences, 8,192 batched tokens).
TEST(VllmReproduction, Llama31_8BVllmV1) {
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 16000;
  s.gpu_memory_utilization = 0.9;
  InferenceEstimate e = run(s);
  EXPECT_NEAR(gib(e.weights_bytes), 14.99, 0.005);
  EXPECT_NEAR(gib(e.activation_bytes), 4.76, 0.1);
  EXPECT_NEAR(gib(e.capacity->kv_budget_bytes), 51.38, 0.5);
}

TEST(Capacity, SglangStaticFraction) {
  // KV pool = fraction × (total − context) − weights; tokens at SGLang's page size 1.
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 8192;
  s.engine = ServingEngine::kSglang;
  s.block_size = 1;
  s.mem_fraction_static = 0.88;
  InferenceEstimate e = run(s);
  ASSERT_TRUE(e.capacity.has_value());
  const double free_at_start =
      static_cast<double>(s.gpu_total_bytes - s.overheads.cuda_context_bytes);
  const int64_t pool = static_cast<int64_t>(std::floor(0.88 * free_at_start)) - e.weights_bytes;
  EXPECT_EQ(e.capacity->kv_budget_bytes, pool);
  EXPECT_EQ(e.capacity->max_kv_tokens, pool / 131'072);
}

TEST(Capacity, NoRoomIsAShortfallNotANegativeNumber) {
  InferenceScenario s = preset("Qwen3-32B");
  s.context = 8192;
  s.gpu_memory_utilization = 0.5;
  InferenceEstimate e = run(s);
  EXPECT_EQ(e.capacity->kv_budget_bytes, 0);
  EXPECT_GT(e.capacity->shortfall_bytes, 0);
  EXPECT_EQ(e.capacity->max_kv_tokens, 0);
  EXPECT_FALSE(e.warnings.empty());
}

TEST(Capacity, CudaGraphsInTheBudgetCostTokens) {
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 8192;
  s.gpu_memory_utilization = 0.9;
  const int64_t without = run(s).capacity->kv_budget_bytes;
  s.cuda_graph_in_budget = true;
  EXPECT_EQ(run(s).capacity->kv_budget_bytes, without - s.overheads.cuda_graph_bytes);
}

TEST(InferenceValidation, BadLayoutsNameTheField) {
  InferenceScenario s = preset("Llama-3.1-8B");
  s.context = 8192;
  auto field = [](const InferenceScenario& x) {
    Result<InferenceEstimate> e = estimate_inference(x);
    return e.ok() ? std::string() : e.error().field;
  };
  s.tp = 3;
  EXPECT_EQ(field(s), "tp");
  s.tp = 1;
  s.ep = 2;
  EXPECT_EQ(field(s), "ep");  // dense model
  s.ep = 1;
  s.pp = 64;
  EXPECT_EQ(field(s), "pp");
  s.pp = 1;
  s.batch = 0;
  EXPECT_EQ(field(s), "batch");
  s.batch = 1;
  s.gpu_memory_utilization = 1.5;
  EXPECT_EQ(field(s), "gpu_memory_utilization");
  s.gpu_memory_utilization = 0.9;
  s.mem_fraction_static = 0.8;
  EXPECT_EQ(field(s), "mem_fraction_static");
  s.mem_fraction_static.reset();
  s.context = int64_t{1} << 40;
  EXPECT_EQ(field(s), "context");
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

// Nemotron-H-8B: 4 attention layers hold KV; 24 Mamba-2 layers a constant state per sequence:
// conv 3 × (8192 + 2·8·128) + ssm 128 heads × 64 × 128 = 1,079,296 values × 2 B each.
TEST(RecurrentState, MambaLayersKeepAConstantStatePerSequence) {
  InferenceScenario s = preset("Nemotron-H-8B-Base-8K");
  s.context = 8192;
  InferenceEstimate e = run(s);
  EXPECT_EQ(e.kv_bytes_per_token, 2 * 4 * 8 * 128 * 2);
  const int64_t state = int64_t{24} * 1'079'296 * 2;
  EXPECT_EQ(row(e, "SSM / linear-attention state"), state);
  EXPECT_EQ(e.kv_bytes_per_sequence, int64_t{16'384} * 8192 + state);
  s.context = 4096;  // the state does not grow with the context; the KV does
  EXPECT_EQ(run(s).kv_bytes_per_sequence, int64_t{16'384} * 4096 + state);
  s.tp = 2;  // heads and conv channels split over tp
  EXPECT_EQ(row(run(s), "SSM / linear-attention state"), state / 2);
  // Weights: every checkpoint tensor once in bf16 (Nemotron-H's attention has no rotary).
  s.tp = 1;
  EXPECT_EQ(run(s).weights_bytes - row(run(s), "rotary"), int64_t{2} * 8'100'852'736);
}

// Qwen3-Next: 12 gated-attention layers of 2 KV heads × 256; 36 DeltaNet layers with conv
// 3 × (2·2048 + 4096) and a recurrent 32 heads × 128 × 128: 548,864 values × 2 B each.
TEST(RecurrentState, DeltaNetStateAndCapacity) {
  InferenceScenario s = preset("Qwen3-Next-80B-A3B-Instruct");
  s.context = 32768;
  s.tp = 4;
  s.gpu_memory_utilization = 0.9;
  InferenceEstimate e = run(s);
  EXPECT_EQ(e.kv_bytes_per_token, 12 * 2 * 1 * 256 * 2);  // 2 KV heads over tp 4: one each
  const int64_t state = int64_t{36} * (3 * 8192 / 4 + 8 * 128 * 128) * 2;
  EXPECT_EQ(row(e, "SSM / linear-attention state"), state);
  // The pool's sequences pay for their state too.
  ASSERT_TRUE(e.capacity.has_value());
  EXPECT_EQ(e.kv_bytes_per_sequence, int64_t{12 * 2 * 256 * 2} * 32768 + state);
  EXPECT_LE(e.capacity->max_sequences * e.kv_bytes_per_sequence, e.capacity->kv_budget_bytes);
}

TEST(InferenceWeights, VisionTowerIsLoadedOnTheFirstRank) {
  InferenceScenario s = preset("Qwen2.5-VL-7B-Instruct");
  s.context = 8192;
  InferenceEstimate e = run(s);
  EXPECT_EQ(row(e, "vision tower"), int64_t{676'550'144} * 2);
}

// Jamba-v0.1: attention at layers 4, 12, 20, 28 (8 KV heads × 128); 28 Mamba-1 layers keep
// conv 3 × 8192 + ssm 8192 × 16 = 155,648 values each (vLLM's mamba1_state_shape).
TEST(RecurrentState, JambaMamba1State) {
  InferenceScenario s = preset("Jamba-v0.1");
  s.context = 8192;
  InferenceEstimate e = run(s);
  EXPECT_EQ(e.kv_bytes_per_token, 2 * 4 * 8 * 128 * 2);
  const int64_t state = int64_t{28} * 155'648 * 2;
  EXPECT_EQ(row(e, "SSM / linear-attention state"), state);
  EXPECT_EQ(e.kv_bytes_per_sequence, int64_t{2 * 4 * 8 * 128 * 2} * 8192 + state);
  EXPECT_EQ(e.weights_bytes - row(e, "rotary"), int64_t{2} * 51'570'323'328);
}

// Falcon-H1-7B: all 44 layers hold KV (2 heads × 128) and a Mamba-2 state:
// conv 3 × (3072 + 2·256) + ssm 24 × 128 × 256 = 797,184 values.
TEST(RecurrentState, FalconH1LayersHoldKvAndState) {
  InferenceScenario s = preset("Falcon-H1-7B-Instruct");
  s.context = 4096;
  InferenceEstimate e = run(s);
  EXPECT_EQ(e.kv_bytes_per_token, 2 * 44 * 2 * 128 * 2);
  const int64_t state = int64_t{44} * 797'184 * 2;
  EXPECT_EQ(row(e, "SSM / linear-attention state"), state);
  EXPECT_EQ(e.kv_bytes_per_sequence, int64_t{2 * 44 * 2 * 128 * 2} * 4096 + state);
}

// Llama 4 Scout: 36 chunked layers keep at most one 8192-token chunk, the 12 NoPE layers the
// whole context; 8 KV heads × 128 each.
TEST(ChunkedAttention, Llama4ChunksBoundTheKv) {
  InferenceScenario s = preset("Llama-4-Scout-17B-16E-Instruct");
  s.context = 32768;
  s.tp = 8;
  InferenceEstimate e = run(s);
  const int64_t per_layer_token = 2 * 1 * 128 * 2;  // one KV head per rank over tp 8
  EXPECT_EQ(e.kv_bytes_per_sequence, per_layer_token * (12 * 32768 + 36 * 8192));
}

// Llama-3.2-Vision: only the 32 self-attention layers hold text KV.
TEST(CrossAttention, MllamaCrossLayersHoldNoTextKv) {
  InferenceScenario s = preset("Llama-3.2-11B-Vision-Instruct");
  s.context = 4096;
  EXPECT_EQ(run(s).kv_bytes_per_token, 2 * 32 * 8 * 128 * 2);
}

}  // namespace
}  // namespace vramplan
