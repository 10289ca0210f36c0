#include "training/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace vramplan {
namespace {

Parallelism pipeline(int64_t pp, int64_t vpp = 1, Schedule schedule = Schedule::k1F1B) {
  Parallelism p;
  p.pp = pp;
  p.vpp = vpp;
  p.schedule = vpp > 1 && schedule == Schedule::k1F1B ? Schedule::kInterleaved : schedule;
  return p;
}

TEST(Pipeline, EvenSplitGivesEachRankConsecutiveLayers) {
  // 32 layers over 4 stages: 8 each; rank 1 holds layers 8..15.
  auto ranks = layout_pipeline(32, pipeline(4), 8);
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_EQ(ranks[1].layers.size(), 8u);
  EXPECT_EQ(ranks[1].layers.front(), 8);
  EXPECT_EQ(ranks[1].layers.back(), 15);
  EXPECT_TRUE(ranks[0].has_embedding);
  EXPECT_FALSE(ranks[0].has_head);
  EXPECT_TRUE(ranks[3].has_head);
}

TEST(Pipeline, OneFOneBKeepsPMinusRankMicrobatches) {
  // 1F1B: rank r keeps min(pp - r, m): with m = 8 → 4, 3, 2, 1; with m = 2 → 2, 2, 2, 1.
  auto ranks = layout_pipeline(32, pipeline(4), 8);
  EXPECT_EQ(ranks[0].in_flight_chunks, 4);
  EXPECT_EQ(ranks[1].in_flight_chunks, 3);
  EXPECT_EQ(ranks[3].in_flight_chunks, 1);
  auto few = layout_pipeline(32, pipeline(4), 2);
  EXPECT_EQ(few[0].in_flight_chunks, 2);
  EXPECT_EQ(few[3].in_flight_chunks, 1);
}

TEST(Pipeline, InterleavedRanksHoldEveryPthChunk) {
  // 32 layers, pp 4, vpp 2 → 8 chunks of 4; rank 0 holds chunks 0 and 4 = layers 0-3, 16-19.
  auto ranks = layout_pipeline(32, pipeline(4, 2), 8);
  const std::vector<int64_t> expected = {0, 1, 2, 3, 16, 17, 18, 19};
  EXPECT_EQ(ranks[0].layers, expected);
  // Warm-up 2·(4−0−1) + (2−1)·4 = 10 chunk-microbatches, +1 in flight = 11; rank 3: 0 + 4 + 1 = 5.
  EXPECT_EQ(ranks[0].in_flight_chunks, 11);
  EXPECT_EQ(ranks[3].in_flight_chunks, 5);
  // 11 chunks × 4 layers = 44 layer-microbatches = L·(1 + (p−1)/(p·v)) = 32·1.375.
  EXPECT_EQ(ranks[0].in_flight_chunks * 4, 44);
}

TEST(Pipeline, EvenChunksAliveLayersAreChunksTimesTheirLayers) {
  auto ranks = layout_pipeline(32, pipeline(4, 2), 8);
  EXPECT_EQ(ranks[0].in_flight_layers.peak, 44);
  EXPECT_EQ(ranks[0].in_flight_layers.at_last_chunk, 44);
  EXPECT_EQ(ranks[3].in_flight_layers.peak, 5 * 4);
}

TEST(Pipeline, UnequalInterleavedChunksFollowTheScheduleOrder) {
  // 6 layers over pp 2 · vpp 2 as 1, 2, 2, 1 (torch's split with the embedding and loss as
  // layers): rank 0 holds chunks of 1 and 2 layers, rank 1 of 2 and 1. Four microbatches, rounds
  // of pp = 2 per virtual stage.
  Parallelism p = pipeline(2, 2);
  p.chunk_layers = {1, 2, 2, 1};
  auto ranks = layout_pipeline(6, p, 4);
  // Rank 0: warm-up 2·1 + 1·2 = 4 forwards (chunk 0, 0, 1, 1: 6 layers), then F chunk 0 → 7
  // alive, B chunk 1 → 5, ...: 5 chunk-microbatches hold 7 layers, not 5 × 3/2.
  EXPECT_EQ(ranks[0].in_flight_chunks, 5);
  EXPECT_EQ(ranks[0].in_flight_layers.peak, 7);
  // Rank 1: warm-up 2 (chunk 0 twice: 4 layers); F chunk 1 → 5 (its loss), B chunk 1 → 4, again;
  // then F chunk 0 → 6, with no loss running.
  EXPECT_EQ(ranks[1].in_flight_layers.peak, 6);
  EXPECT_EQ(ranks[1].in_flight_layers.at_last_chunk, 5);
}

// The schedule played step by step: forwards through the warm-up, then one forward and one
// backward, layers alive taken after each forward.
InFlightLayers stepped(const Parallelism& p, int64_t rank, int64_t m,
                       const std::vector<int64_t>& sizes) {
  const int64_t vpp = p.vpp, total = m * vpp;
  const int64_t warmup = std::min(2 * (p.pp - rank - 1) + (vpp - 1) * p.pp, total);
  const int64_t round = std::min(p.pp, m);
  InFlightLayers out;
  int64_t alive = 0;
  auto forward = [&](int64_t k) {
    const int64_t chunk = (k / round) % vpp;
    alive += sizes[static_cast<size_t>(chunk)];
    out.peak = std::max(out.peak, alive);
    if (chunk == vpp - 1) out.at_last_chunk = std::max(out.at_last_chunk, alive);
  };
  for (int64_t k = 0; k < warmup; ++k) forward(k);
  for (int64_t i = 0; i < total - warmup; ++i) {
    forward(warmup + i);
    alive -= sizes[static_cast<size_t>(vpp - 1 - (i / round) % vpp)];
  }
  return out;
}

TEST(Pipeline, InterleavedAliveLayersByRunsMatchTheScheduleStepByStep) {
  std::mt19937 rng(7);
  auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 3000; ++trial) {
    Parallelism p = pipeline(draw(2, 8), draw(2, 6));
    std::vector<int64_t> sizes(static_cast<size_t>(p.vpp));
    for (int64_t& n : sizes) n = draw(0, 5);
    const int64_t rank = draw(0, static_cast<int>(p.pp) - 1), m = draw(1, 40);
    const InFlightLayers want = stepped(p, rank, m, sizes);
    const InFlightLayers got = in_flight_layers(p, rank, m, sizes);
    bool even = true;
    for (int64_t n : sizes) even = even && n == sizes.front();
    if (even) continue;  // in_flight_chunks × layers / vpp, checked above
    ASSERT_EQ(got.peak, want.peak)
        << "pp " << p.pp << " vpp " << p.vpp << " rank " << rank << " m " << m;
    ASSERT_EQ(got.at_last_chunk, want.at_last_chunk)
        << "pp " << p.pp << " vpp " << p.vpp << " rank " << rank << " m " << m;
  }
}

TEST(Pipeline, GPipeKeepsEveryMicrobatch) {
  auto ranks = layout_pipeline(32, pipeline(4, 1, Schedule::kGPipe), 8);
  for (const auto& r : ranks) EXPECT_EQ(r.in_flight_chunks, 8);
  EXPECT_EQ(ranks[3].in_flight_logits, 8);
}

TEST(Pipeline, NoPipelineRunsOneMicrobatchAtATime) {
  auto ranks = layout_pipeline(32, pipeline(1), 16);
  EXPECT_EQ(ranks[0].in_flight_chunks, 1);
  EXPECT_TRUE(ranks[0].has_embedding && ranks[0].has_head);
}

TEST(Pipeline, UnevenFirstAndLastStages) {
  // 30 layers, pp 4, first 6, last 6 → the two middle stages share 18 = 9 + 9.
  Parallelism p = pipeline(4);
  p.first_stage_layers = 6;
  p.last_stage_layers = 6;
  ASSERT_FALSE(validate_pipeline(30, p));
  auto ranks = layout_pipeline(30, p, 8);
  EXPECT_EQ(ranks[0].layers.size(), 6u);
  EXPECT_EQ(ranks[1].layers.size(), 9u);
  EXPECT_EQ(ranks[2].layers.size(), 9u);
  EXPECT_EQ(ranks[3].layers.size(), 6u);
}

TEST(Pipeline, EmbeddingAndLossCountAsLayers) {
  // 30 layers + embedding + loss = 32 units over 4 stages: 7, 8, 8, 7 decoder layers.
  Parallelism p = pipeline(4);
  p.embedding_as_stage = p.loss_as_stage = true;
  ASSERT_FALSE(validate_pipeline(30, p));
  auto ranks = layout_pipeline(30, p, 8);
  EXPECT_EQ(ranks[0].layers.size(), 7u);
  EXPECT_EQ(ranks[1].layers.size(), 8u);
  EXPECT_EQ(ranks[3].layers.size(), 7u);
}

TEST(Pipeline, EmbeddingAndHeadAsTheirOwnStages) {
  // 6 layers + 2 units over 8 stages: the first holds only the embedding, the last only the head.
  Parallelism p = pipeline(8);
  p.embedding_as_stage = p.loss_as_stage = true;
  ASSERT_FALSE(validate_pipeline(6, p));
  auto ranks = layout_pipeline(6, p, 16);
  EXPECT_TRUE(ranks[0].layers.empty());
  EXPECT_TRUE(ranks[7].layers.empty());
  EXPECT_EQ(ranks[1].layers.size(), 1u);
}

TEST(Pipeline, BalancedSplitSpreadsTheRemainder) {
  // 28 layers over 8 stages: 28 = 8·3 + 4, so the first four stages hold 4 and the rest 3.
  Parallelism p = pipeline(8);
  p.balanced_split = true;
  ASSERT_FALSE(validate_pipeline(28, p));
  auto ranks = layout_pipeline(28, p, 16);
  EXPECT_EQ(ranks[0].layers.size(), 4u);
  EXPECT_EQ(ranks[3].layers.size(), 4u);
  EXPECT_EQ(ranks[4].layers.size(), 3u);
  EXPECT_EQ(ranks[7].layers.back(), 27);
  // More stages than layers: the last stages hold none.
  Parallelism wide = pipeline(32);
  wide.balanced_split = true;
  auto sparse = layout_pipeline(16, wide, 64);
  EXPECT_EQ(sparse[15].layers.size(), 1u);
  EXPECT_TRUE(sparse[16].layers.empty());
}

TEST(Pipeline, BalancedWithEmbeddingAndLossIsTorchtitansSplit) {
  // torchtitan's generate_llm_fqn_per_model_part (input and output weight 1): Llama 3.1 405B's
  // 126 layers + 2 over 8 stages give 15, 16 × 6, 15; over 16 interleaved stages 7, 8 × 14, 7,
  // so rank 0 (stages 0 and 8) and rank 7 (stages 7 and 15) hold 15 and the others 16.
  Parallelism p = pipeline(8);
  p.balanced_split = p.embedding_as_stage = p.loss_as_stage = true;
  ASSERT_FALSE(validate_pipeline(126, p));
  auto ranks = layout_pipeline(126, p, 8);
  EXPECT_EQ(ranks[0].layers.size(), 15u);
  for (int r = 1; r < 7; ++r) EXPECT_EQ(ranks[r].layers.size(), 16u) << r;
  EXPECT_EQ(ranks[7].layers.size(), 15u);
  Parallelism interleaved = pipeline(8, 2);
  interleaved.balanced_split = interleaved.embedding_as_stage = interleaved.loss_as_stage = true;
  ASSERT_FALSE(validate_pipeline(126, interleaved));
  auto chunks = layout_pipeline(126, interleaved, 8);
  EXPECT_EQ(chunks[0].layers.size(), 15u);
  EXPECT_EQ(chunks[0].layers.front(), 0);
  EXPECT_EQ(chunks[0].layers[7], 63);  // stage 8 starts after 7 + 8 × 7 layers
  EXPECT_EQ(chunks[1].layers.size(), 16u);
  EXPECT_EQ(chunks[7].layers.size(), 15u);
  EXPECT_EQ(chunks[7].layers.back(), 125);
  // With a remainder the first stages take it: 32 + 2 over 8 gives 4 (one fewer than 5), 5, 4 × 5
  // and 3 — torchtitan's split of a 32-layer model.
  Parallelism small = pipeline(8);
  small.balanced_split = small.embedding_as_stage = small.loss_as_stage = true;
  auto sizes = layout_pipeline(32, small, 8);
  EXPECT_EQ(sizes[0].layers.size(), 4u);
  EXPECT_EQ(sizes[1].layers.size(), 5u);
  EXPECT_EQ(sizes[2].layers.size(), 4u);
  EXPECT_EQ(sizes[7].layers.size(), 3u);
}

TEST(Pipeline, IndivisibleLayersNameTheDegree) {
  auto e = validate_pipeline(32, pipeline(5));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "pp");
  EXPECT_EQ(e->value, "5");
  auto v = validate_pipeline(32, pipeline(2, 3));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->field, "vpp");
}

TEST(Pipeline, UnevenLayoutThatDoesNotSplitIsAnError) {
  Parallelism p = pipeline(4);
  p.first_stage_layers = 5;  // 32 − 5 = 27 over 3 stages = 9: fine
  EXPECT_FALSE(validate_pipeline(32, p));
  p.first_stage_layers = 6;  // 26 over 3 stages: not whole
  auto e = validate_pipeline(32, p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "first_stage_layers");
  p.first_stage_layers = 40;  // more than the model has
  EXPECT_TRUE(validate_pipeline(32, p));
}

TEST(Pipeline, LighterEndsWithVirtualStagesShareEachRanksLayers) {
  // Megatron's --decoder-first/last-pipeline-num-layers with vpp 2: 30 layers, pp 4: first 4 and
  // last 2, the middle ranks 12 each; each rank's two chunks take half of its layers. Chunk
  // order (rank = c mod 4): 2, 6, 6, 1 | 2, 6, 6, 1.
  Parallelism p = pipeline(4, 2);
  p.first_stage_layers = 4;
  p.last_stage_layers = 2;
  ASSERT_FALSE(validate_pipeline(30, p));
  auto ranks = layout_pipeline(30, p, 8);
  EXPECT_EQ(ranks[0].layers, (std::vector<int64_t>{0, 1, 15, 16}));
  EXPECT_EQ(ranks[1].layers.size(), 12u);
  EXPECT_EQ(ranks[1].layers.front(), 2);
  EXPECT_EQ(ranks[3].layers, (std::vector<int64_t>{14, 29}));
  EXPECT_EQ(ranks[3].last_chunk_layers, 1);
  p.first_stage_layers = 3;  // three layers do not halve over the rank's two chunks
  p.last_stage_layers = 3;
  auto e = validate_pipeline(30, p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "first_stage_layers");
}

TEST(Pipeline, AnExplicitLayoutPlacesEveryChunk) {
  // Megatron's DeepSeek-V3 layout "Et|(tt|)*30mL" on pp 8 × vpp 4: rank 0 holds chunks 0, 8, 16
  // and 24 (1 + 2 + 2 + 2 layers); rank 7 holds 7, 15, 23, 31 (the last, with the loss, empty).
  Parallelism p = pipeline(8, 4);
  p.chunk_layers.assign(32, 2);
  p.chunk_layers.front() = 1;
  p.chunk_layers.back() = 0;
  ASSERT_FALSE(validate_pipeline(61, p));
  auto ranks = layout_pipeline(61, p, 16);
  EXPECT_EQ(ranks[0].layers.size(), 7u);
  EXPECT_EQ(ranks[0].layers.front(), 0);
  EXPECT_EQ(ranks[0].layers[1], 15);  // chunk 8 starts after 1 + 7·2 layers
  EXPECT_EQ(ranks[7].layers.size(), 6u);
  EXPECT_EQ(ranks[7].last_chunk_layers, 0);
  EXPECT_TRUE(ranks[7].has_head);
  auto wrong_total = validate_pipeline(60, p);
  ASSERT_TRUE(wrong_total);
  EXPECT_EQ(wrong_total->field, "pipeline_layout");
  p.vpp = 2;  // 32 listed stages for 16 chunks
  auto wrong_count = validate_pipeline(61, p);
  ASSERT_TRUE(wrong_count);
  EXPECT_EQ(wrong_count->field, "pipeline_layout");
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

ModelConfig llama3_8b_shape() {
  ModelConfig m;
  m.num_layers = 32;
  m.hidden = 4096;
  m.num_heads = m.num_kv_heads = 32;
  m.head_dim = 128;
  m.ffn = 14336;
  m.vocab = 131072;
  m.moe_layers.assign(32, false);
  return m;
}

// The Ultra-Scale Playbook prints nanotron's split of Llama3-8B over 8 stages: rank 0 holds the
// embedding and 5 decoder layers, rank 3 also 5, the last rank 2 layers with the LM head and
// loss (Ultra-Scale Playbook, "3D parallelism in nanotron", build_model's printout).
TEST(Pipeline, ComputeCostSplitMatchesNanotronsLlama3Example) {
  const std::vector<int64_t> layers = compute_cost_split(llama3_8b_shape(), 8);
  EXPECT_EQ(layers, (std::vector<int64_t>{5, 4, 4, 5, 4, 4, 4, 2}));
}

TEST(Pipeline, ComputeCostSplitPutsTwoLayersFirstWhenStagesMatchLayers) {
  // 32 stages for 32 layers: the LM head's cost (V·h ≈ 2.2 layers) pushes layers forward, so
  // the first rank (which keeps 32 microbatches in flight) holds two layers.
  const std::vector<int64_t> layers = compute_cost_split(llama3_8b_shape(), 32);
  EXPECT_EQ(layers.front(), 2);
  int64_t total = 0;
  for (int64_t n : layers) total += n;
  EXPECT_EQ(total, 32);
}

TEST(Pipeline, ComputeCostSplitNeedsOneChunkPerRank) {
  Parallelism p;
  p.pp = 4;
  p.vpp = 2;
  p.compute_balanced_split = true;
  auto e = validate_pipeline(llama3_8b_shape(), p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "pipeline_split");
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

// Found by the planner's sanitizer run: with fewer layers than stages, counting the loss as a
// layer of a balanced split left the last stage at −1 layers.
TEST(Pipeline, BalancedSplitRefusesLossStageOnAnEmptyStage) {
  Parallelism p;
  p.pp = 4;
  p.balanced_split = true;
  p.loss_as_stage = true;
  auto e = validate_pipeline(2, p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "pipeline_split");
}

}  // namespace
}  // namespace vramplan
