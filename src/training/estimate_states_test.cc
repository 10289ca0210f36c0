// FSDP's gathered units (estimate_states.cc add_gathered_params, model_states.h
// fsdp_gathered_params): which units are all-gathered at the forward/backward peak, and when the
// unit gradients and the gathered buffers are absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "vramplan/io/scenario_io.h"
#include "vramplan/training/estimate.h"

namespace vramplan {
namespace {

// Llama-3.1-8B with 2 layers: the embedding (128,256 × 4,096), the LM head with the final norm,
// and a decoder layer.
constexpr int64_t kEmbedding = 525'336'576;
constexpr int64_t kHead = 525'336'576 + 4'096;
constexpr int64_t kLayer = 218'112'000;
constexpr int64_t kTotal = kEmbedding + kHead + 2 * kLayer;

nlohmann::json llama(int64_t global_batch = 4) {
  return {{"model", "Llama-3.1-8B"},   {"num_layers", 2},
          {"seq_len", 4096},           {"gpus", 4},
          {"micro_batch", 1},          {"global_batch", global_batch},
          {"framework", "torchtitan"}, {"model_code", "transformers"}};
}

Estimate run(const nlohmann::json& settings) {
  Result<ResolvedScenario> r = resolve_scenario(settings, nullptr);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  if (!r.ok()) return {};
  Result<Estimate> e = estimate(r->scenario, {.explain = true});
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  return e.ok() ? *e : Estimate{};
}

int64_t row(const Estimate& e, const std::string& component) {
  for (const Row& r : e.stages.front().rows)
    if (r.component == component) return r.bytes;
  return -1;  // absent
}

// The layers prefetched in the backward: allocated, or reserved where the freed logits hide them.
int64_t prefetched(const Estimate& e) {
  return std::max<int64_t>(row(e, "prefetched parameter buffers"), 0) +
         std::max<int64_t>(row(e, "prefetched parameter buffers (reserved beside the logits)"), 0);
}

// One unit's unsharded gradients: allocated, or reserved where the freed logits hide them.
int64_t unit_gradients(const Estimate& e) {
  return std::max<int64_t>(row(e, "unit gradients (before reduce-scatter)"), 0) +
         std::max<int64_t>(row(e, "unit gradients (reserved beside the logits)"), 0);
}

int64_t phase(const Estimate& e, const std::string& name) {
  for (const Phase& p : e.stages.front().phases)
    if (p.name == name) return p.allocated_bytes;
  return -1;
}

TEST(FsdpUnits, TorchtitansOwnUnitsGatherTheLargestTwice) {
  // torchtitan wraps the embedding and [norm, output] as units: the largest is the head with
  // the final norm, in use plus one prefetched, in bf16 (its mixed-precision policy).
  const Estimate e = run(llama());
  EXPECT_EQ(row(e, "unsharded parameter buffers"), 2 * kHead * 2);
  // ... and that unit's bf16 gradients with their fp32 copy for the reduce-scatter; they come
  // after the loss's backward freed the logits (5.9 GiB here), which hide them: reserved only.
  EXPECT_EQ(unit_gradients(e), kHead * (2 + 4));
  EXPECT_EQ(row(e, "unit gradients (before reduce-scatter)"), -1);
}

TEST(FsdpUnits, UnitGradientsBeyondTheFreedLogitsStayAllocated) {
  // 64 tokens: the logits and loss (64 × 128,256 × (2 + 4 + 8) B... far below the head unit's
  // gradients) hide only their own size; the rest of the gradients is allocated.
  nlohmann::json settings = llama();
  settings["seq_len"] = 64;
  const Estimate e = run(settings);
  const int64_t allocated = row(e, "unit gradients (before reduce-scatter)");
  const int64_t reserved = row(e, "unit gradients (reserved beside the logits)");
  EXPECT_GT(allocated, 0);
  EXPECT_GT(reserved, 0);
  EXPECT_EQ(allocated + reserved, kHead * (2 + 4));
  // Without a head on the rank (the first of two pipeline stages) nothing is freed before them.
  settings["gpus"] = 8;
  settings["pp"] = 2;
  const Estimate pp = run(settings);
  EXPECT_EQ(row(pp, "unit gradients (reserved beside the logits)"), -1);
}

TEST(FsdpUnits, TheRootUnitStaysGatheredBesideTheLayersInFlight) {
  // Layers and root wrapped (accelerate, torchtune, the reference's harness): the root's
  // embedding, final norm and head are never resharded after forward; beside them the layer in
  // use and the prefetched one.
  nlohmann::json settings = llama();
  settings["fsdp_root_unit"] = true;
  const Estimate e = run(settings);
  EXPECT_EQ(row(e, "unsharded parameter buffers"), (kEmbedding + kHead + kLayer) * 2);
  EXPECT_EQ(prefetched(e), kLayer * 2);
  // The unit whose gradients wait for their reduce-scatter is a layer: the root's are reduced
  // at the end of the backward.
  EXPECT_EQ(unit_gradients(e), kLayer * (2 + 4));
  // hf-trainer (accelerate's FSDP) wraps that way.
  settings.erase("fsdp_root_unit");
  settings["framework"] = "hf-trainer";
  settings["fsdp"] = "full_shard";
  settings["fsdp_mixed_precision"] = true;
  const Estimate hf = run(settings);
  EXPECT_EQ(row(hf, "unsharded parameter buffers"), (kEmbedding + kHead + kLayer) * 2);
  EXPECT_EQ(prefetched(hf), kLayer * 2);
  EXPECT_EQ(unit_gradients(hf), kLayer * (2 + 4));
}

TEST(FsdpUnits, TheBackwardPrefetchComesAfterTheLogitsAreFreed) {
  // FSDP2's root runs the loss's backward with the last layer gathered (never resharded after
  // forward); the next layer is prefetched from the last layer's pre-backward, once the logits
  // (5.9 GiB here) are freed: reserved beside them, not allocated.
  nlohmann::json settings = llama();
  settings["fsdp_root_unit"] = true;
  const Estimate e = run(settings);
  EXPECT_EQ(row(e, "prefetched parameter buffers"), -1);
  EXPECT_EQ(row(e, "prefetched parameter buffers (reserved beside the logits)"), kLayer * 2);
  // Every unit stays gathered with reshard_after_forward off: nothing is prefetched.
  settings["fsdp"] = "shard_grad_op";
  EXPECT_EQ(prefetched(run(settings)), 0);
}

TEST(FsdpUnits, TheLastAllGatherOutputLivesThroughTheForwardsLoss) {
  // FSDP2 keeps the forward's last all-gather output (the last layer's flat buffer) until the
  // root's post-forward; transformers computes the loss inside the root's forward. Mistral's
  // 32,768-token vocabulary: the forward's loss with that buffer (one layer, bf16) is the larger
  // loss moment, so the backward's extra 2 B per logit is not allocated then.
  nlohmann::json settings = llama();
  settings["model"] = "Mistral-7B-v0.3";
  settings["fsdp_root_unit"] = true;
  const Estimate e = run(settings);
  EXPECT_EQ(row(e, "last all-gather output (kept through the loss)"), kLayer * 2);
  EXPECT_EQ(row(e, "loss backward (reserved beside the all-gather output)"),
            int64_t{4096} * 32768 * 2);
  // Llama's 128,256 tokens: the loss's backward holds more than the buffer, which is freed
  // before it: reserved.
  settings["model"] = "Llama-3.1-8B";
  const Estimate llama_e = run(settings);
  EXPECT_EQ(row(llama_e, "last all-gather output (kept through the loss)"), -1);
  EXPECT_EQ(row(llama_e, "last all-gather output (reserved beside the logits)"), kLayer * 2);
  // torchtitan's own model computes the loss outside the model: nothing is kept.
  settings["model_code"] = "default";
  const Estimate titan = run(settings);
  EXPECT_EQ(row(titan, "last all-gather output (kept through the loss)"), -1);
  EXPECT_EQ(row(titan, "last all-gather output (reserved beside the logits)"), -1);
}

TEST(FsdpUnits, ReshardAfterForwardOffStillReshardsEachLayerAfterItsBackward) {
  // With every layer gathered to its backward, the first layer to run its backward is resharded
  // after it: by the unit gradients' moment its gathered bytes are free as well.
  nlohmann::json settings = llama();
  settings["fsdp_root_unit"] = true;
  settings["fsdp_mixed_precision"] = true;
  settings["seq_len"] = 64;
  const int64_t full_shard = row(run(settings), "unit gradients (reserved beside the logits)");
  settings["fsdp"] = "shard_grad_op";
  const Estimate e = run(settings);
  EXPECT_EQ(unit_gradients(e), kLayer * (2 + 4));
  EXPECT_GT(row(e, "unit gradients (reserved beside the logits)"), full_shard);
}

TEST(FsdpUnits, TheReduceScatterInputWaitsBesideTheNextLayersBackward) {
  // FSDP2 keeps a unit's reduce-scatter input until the next unit's post-backward: the unit
  // gradients are whole once the first layer's activations are freed, so beyond the logits
  // that memory hides their fp32 part too (64 tokens: logits far below one layer's gradients).
  nlohmann::json settings = llama();
  settings["fsdp_root_unit"] = true;
  settings["fsdp_mixed_precision"] = true;
  settings["seq_len"] = 64;
  const Estimate e = run(settings);
  const int64_t logits = row(e, "logits + loss");
  const int64_t reserved = row(e, "unit gradients (reserved beside the logits)");
  ASSERT_GT(logits, 0);
  EXPECT_GT(reserved, 0);
  EXPECT_EQ(unit_gradients(e), kLayer * (2 + 4));
  // What the prefetch left of the logits, plus at most the fp32 part.
  EXPECT_GT(reserved + std::max<int64_t>(row(e, "prefetched parameter buffers"), 0), logits);
  EXPECT_LE(reserved, logits + kLayer * 4);
}

TEST(FsdpUnits, ReshardAfterForwardOffGathersEveryUnitOverTheStoredShard) {
  nlohmann::json settings = llama();
  settings["fsdp"] = "shard_grad_op";
  const Estimate e = run(settings);
  EXPECT_EQ(row(e, "weights"), kTotal / 4 * 4);  // the fp32 shard stays the stored copy
  EXPECT_EQ(row(e, "unsharded parameter buffers"), kTotal * 2);
  EXPECT_EQ(unit_gradients(e), kHead * (2 + 4));
}

TEST(FsdpUnits, GatheredBuffersAreGoneAtTheOptimizerStep) {
  // FSDP reshards each unit after its backward: the step holds the fp32 weights, gradients and
  // Adam states of the shard (4 × 4 B) and the GEMM workspaces.
  nlohmann::json settings = llama(16);
  settings["gemm_workspace_mib"] = 0;
  const Estimate e = run(settings);
  ASSERT_GT(row(e, "unsharded parameter buffers"), 0);
  EXPECT_EQ(phase(e, "optimizer step"), 4 * 4 * (kTotal / 4));
}

}  // namespace
}  // namespace vramplan
