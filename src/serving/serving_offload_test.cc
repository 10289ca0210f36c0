#include "serving/serving_offload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "vramplan/io/inference_request.h"

namespace vramplan {
namespace {

using nlohmann::json;

constexpr int64_t kGiB = int64_t{1} << 30;

Result<SettingsInference> run(json settings) {
  return infer_settings(settings, nullptr, nullptr, EstimateOptions{true});
}

InferenceEstimate ok(json settings) {
  Result<SettingsInference> r = run(std::move(settings));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r->estimate : InferenceEstimate{};
}

std::string error_field(json settings) {
  Result<SettingsInference> r = run(std::move(settings));
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().field;
}

const Row* row(const InferenceEstimate& e, const std::string& prefix) {
  const auto it = std::find_if(e.rows.begin(), e.rows.end(),
                               [&](const Row& r) { return r.component.rfind(prefix, 0) == 0; });
  return it == e.rows.end() ? nullptr : &*it;
}

const KvTier* tier(const InferenceEstimate& e, const std::string& name) {
  const auto it = std::find_if(e.kv_tiers.begin(), e.kv_tiers.end(),
                               [&](const KvTier& t) { return t.tier == name; });
  return it == e.kv_tiers.end() ? nullptr : &*it;
}

const json kLlama = {{"model", "Llama-3.1-8B"}, {"gpu_memory_utilization", 0.9}};

TEST(ServingOffload, CpuOffloadMovesLayerWeightsToTheHostAndGrowsTheKvBudget) {
  const InferenceEstimate base = ok(kLlama);
  json s = kLlama;
  s["cpu_offload_gib"] = 4;
  const InferenceEstimate off = ok(s);
  // The shares are floored per row: the host gets what the GPU rows lost, within a byte a row.
  const Row* host = row(off, "weights offloaded to CPU");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->counts_toward, CountsToward::kHost);
  EXPECT_NEAR(static_cast<double>(host->bytes), 4.0 * kGiB, 8);
  EXPECT_EQ(base.weights_bytes - off.weights_bytes, host->bytes);
  EXPECT_EQ(base.device_bytes - off.device_bytes, host->bytes);
  EXPECT_EQ(off.host_bytes, host->bytes);
  EXPECT_NE(host->formula.find("--cpu-offload-gib 4.00 GiB"), std::string::npos);
  EXPECT_NE(host->source.find("maybe_offload_to_cpu"), std::string::npos);
  // The embedding and LM head stay whole; the attention row says what it lost.
  EXPECT_EQ(row(off, "embedding")->bytes, row(base, "embedding")->bytes);
  EXPECT_LT(row(off, "attention weights")->bytes, row(base, "attention weights")->bytes);
  EXPECT_NE(row(off, "attention weights")->formula.find("kept in CPU memory"), std::string::npos);
  // vLLM's budget subtracts the weights left on the GPU: 4 GiB more for KV blocks.
  EXPECT_NEAR(static_cast<double>(off.capacity->kv_budget_bytes - base.capacity->kv_budget_bytes),
              4.0 * kGiB, 8);
  EXPECT_GT(off.capacity->max_kv_tokens, base.capacity->max_kv_tokens);
  EXPECT_EQ(row(off, "offloaded layer copied in"), nullptr);  // vLLM reads through UVA
}

TEST(ServingOffload, SglangCopiesAnOffloadedLayerBackForItsForward) {
  const InferenceEstimate e =
      ok({{"model", "Llama-3.1-8B"}, {"mem_fraction_static", 0.85}, {"cpu_offload_gib", 2}});
  const Row* copy = row(e, "offloaded layer copied in");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->counts_toward, CountsToward::kAllocated);
  // One of Llama-3.1-8B's 32 layers: 218 M parameters in bf16, below the 2 GiB offloaded.
  EXPECT_GT(copy->bytes, 400'000'000);
  EXPECT_LT(copy->bytes, 500'000'000);
}

TEST(ServingOffload, BadOffloadValuesNameTheirSetting) {
  json s = kLlama;
  s["cpu_offload_gib"] = -1;
  EXPECT_EQ(error_field(s), "cpu_offload_gib");
  s["cpu_offload_gib"] = 20;  // more than the layers' ~13 GiB of weights
  Result<SettingsInference> r = run(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "cpu_offload_gib");
  EXPECT_NE(r.error().accepted.find("decoder layers' weights"), std::string::npos);
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"engine", "sglang"}, {"swap_space_gib", 4}}),
            "swap_space_gib");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"engine", "sglang"}, {"kv_offload_gib", 4}}),
            "kv_offload_gib");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"enable_hierarchical_cache", true}}),
            "enable_hierarchical_cache");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"hicache_ratio", 3}}), "hicache_ratio");
  EXPECT_EQ(
      error_field(
          {{"model", "Llama-3.1-8B"}, {"engine", "sglang"}, {"enable_hierarchical_cache", true}}),
      "hicache_ratio");  // the ratio needs the GPU pool: mem_fraction_static
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"},
                         {"mem_fraction_static", 0.8},
                         {"enable_hierarchical_cache", true},
                         {"hicache_ratio", 0}}),
            "hicache_ratio");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"host_memory_gib", 0}}), "host_memory_gib");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"kv_offload_gib", "lots"}}), "kv_offload_gib");
}

TEST(ServingOffload, SwapSpaceIsWholeBlocksOnTheHost) {
  json s = kLlama;
  s["swap_space_gib"] = 4;
  const InferenceEstimate e = ok(s);
  // Llama-3.1-8B: 32 layers × 2 × 8 KV heads × 128 × 2 B = 131,072 B a token; blocks of 16.
  const int64_t page = 16 * e.kv_bytes_per_token;
  ASSERT_EQ(e.kv_bytes_per_token, 131072);
  const KvTier* swap = tier(e, "host: swap space");
  ASSERT_NE(swap, nullptr);
  EXPECT_EQ(swap->bytes, (4 * kGiB / page) * page);
  EXPECT_EQ(swap->tokens, 4 * kGiB / page * 16);
  EXPECT_EQ(e.host_bytes, swap->bytes);
  EXPECT_EQ(e.kv_tiers.front().tier, "gpu");
  EXPECT_EQ(e.kv_tiers.front().tokens, e.capacity->max_kv_tokens);
  EXPECT_TRUE(std::any_of(e.warnings.begin(), e.warnings.end(), [](const std::string& w) {
    return w.find("V1") != std::string::npos && w.find("swap") != std::string::npos;
  }));
}

TEST(ServingOffload, KvOffloadIsSplitOverTheTensorAndPipelineRanks) {
  const InferenceEstimate e = ok({{"model", "Llama-3.1-8B"}, {"tp", 2}, {"kv_offload_gib", 64}});
  const KvTier* host = tier(e, "host: KV offload");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->bytes, 32 * kGiB);  // vLLM config/kv_offloading.py: / (tp × pp)
  const int64_t page = 16 * e.kv_bytes_per_token;
  EXPECT_EQ(host->tokens, 32 * kGiB / page * 16);
  EXPECT_EQ(e.host_bytes, 32 * kGiB);
  // Without a fraction the GPU tier is the batch's KV cache.
  EXPECT_EQ(e.kv_tiers.front().tokens, e.context);
}

TEST(ServingOffload, HiCacheIsTheRatioOfTheGpuPoolInWholePages) {
  json settings = {{"model", "Llama-3.1-8B"},
                   {"mem_fraction_static", 0.85},
                   {"enable_hierarchical_cache", true}};
  const InferenceEstimate e = ok(settings);
  const KvTier* host = tier(e, "host: HiCache");
  ASSERT_NE(host, nullptr);
  const int64_t gpu_tokens = e.capacity->max_kv_tokens;
  EXPECT_EQ(host->tokens, gpu_tokens * 2 + 1);  // page size 1: size // 1 + 1 pages
  EXPECT_EQ(host->bytes, host->tokens * e.kv_bytes_per_token);
  settings["hicache_size_gb"] = 100;  // GB per GPU, over the ratio
  const InferenceEstimate sized = ok(settings);
  const int64_t wanted = 100'000'000'000 / sized.kv_bytes_per_token;
  EXPECT_EQ(tier(sized, "host: HiCache")->tokens, wanted + 1);
}

TEST(ServingOffload, TheNodeRamIsChecked) {
  const InferenceEstimate e =
      ok({{"model", "Llama-3.1-8B"}, {"kv_offload_gib", 48}, {"host_memory_gib", 56}});
  ASSERT_FALSE(e.fit.empty());
  const Fit& f = e.fit.front();
  ASSERT_TRUE(f.host_checked);
  EXPECT_EQ(f.gpus_per_node, 1);  // one GPU in this layout
  EXPECT_EQ(f.host_node_bytes, 48 * kGiB);
  EXPECT_EQ(f.host_verdict, Verdict::kTight);  // 86% of 56 GiB
  const InferenceEstimate none = ok(kLlama);
  EXPECT_EQ(none.host_bytes, 0);
  EXPECT_FALSE(none.fit.front().host_checked);
  EXPECT_EQ(none.kv_tiers.size(), 1u);
}

}  // namespace
}  // namespace vramplan
