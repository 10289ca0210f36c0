#include "vramplan/training/frameworks.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/test_models.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/training/estimate.h"

namespace vramplan {
namespace {

Scenario resolved(const nlohmann::json& settings) {
  auto r = resolve_scenario(settings, [](const std::string&) -> Result<std::string> {
    return Error{"model", "", "", "no files in tests"};
  });
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r->scenario;
}

int64_t row_bytes_of(const StageEstimate& stage, const std::string& component) {
  for (const Row& r : stage.rows)
    if (r.component == component) return r.bytes;
  return -1;
}

int64_t row_bytes(const Estimate& e, const std::string& component) {
  for (const Row& r : e.stages.front().rows)
    if (r.component == component) return r.bytes;
  return -1;
}

TEST(Frameworks, NoFrameworkKeepsTheGenericConventions) {
  const Scenario s = resolved({{"model", "Llama-3.1-8B"}});
  EXPECT_EQ(s.framework_id, -1);
  EXPECT_EQ(s.conventions.gated_mlp_tensors, 3);
  EXPECT_EQ(s.conventions.vocab_pad_multiple, 1);
}

TEST(Frameworks, EachPresetSetsItsConventions) {
  const Scenario mega = resolved({{"model", "Llama-3.1-8B"}, {"framework", "megatron"}});
  EXPECT_EQ(mega.conventions.vocab_pad_multiple, 128);
  EXPECT_EQ(mega.conventions.loss_bytes_per_logit, 6);
  const Scenario nano = resolved({{"model", "Llama-3.1-8B"}, {"framework", "nanotron"}});
  EXPECT_EQ(nano.conventions.gated_mlp_tensors, 4);
  EXPECT_EQ(nano.conventions.loss_bytes_per_logit, 10);
  EXPECT_FALSE(nano.conventions.mha_keeps_packed_qkv);  // docs/frameworks.md, Known gaps
  EXPECT_TRUE(nano.conventions.tp_allgather_buffer);
  EXPECT_FALSE(nano.conventions.sp_saves_gathered_inputs);
  EXPECT_TRUE(nano.parallel.compute_balanced_split);
  const Scenario titan = resolved({{"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}});
  EXPECT_EQ(titan.parallel.fsdp, FsdpMode::kFullShard);
  EXPECT_EQ(titan.training.param_dtype, DType::kFp32);
  EXPECT_FALSE(titan.training.master_weights);
  EXPECT_TRUE(titan.conventions.sp_saves_gathered_inputs);
  const Scenario ds = resolved({{"model", "Llama-3.1-8B"}, {"framework", "DeepSpeed"}});
  EXPECT_EQ(ds.parallel.zero, 2);
  EXPECT_EQ(ds.conventions.comm_bucket_elements, 500'000'000);
  const Scenario hf = resolved({{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"}});
  EXPECT_TRUE(hf.conventions.ddp_bucket_copy);
  EXPECT_TRUE(hf.conventions.autocast_weight_cache);
}

std::vector<int64_t> stage_layers(const Scenario& s) {
  Result<Estimate> e = estimate(s, {.explain = false});
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  std::vector<int64_t> out(static_cast<size_t>(s.parallel.pp), 0);
  if (!e.ok()) return out;
  for (const StageEstimate& stage : e->stages)
    for (int64_t rank : stage.ranks) out[static_cast<size_t>(rank)] = stage.layers;
  return out;
}

TEST(Frameworks, TorchtitanSplitsItsOwnWayUnlessASplitIsGiven) {
  // generate_llm_fqn_per_model_part: 126 layers + embedding + output over 16 stages.
  nlohmann::json settings = {{"model", "Llama-3.1-405B"},
                             {"framework", "torchtitan"},
                             {"pp", 16},
                             {"gpus", 128},
                             {"global_batch", 64}};
  std::vector<int64_t> want(16, 8);
  want.front() = want.back() = 7;
  EXPECT_EQ(stage_layers(resolved(settings)), want);
  // Any split setting replaces the framework's as a whole: no embedding/loss units left over.
  settings["first_stage_layers"] = 6;
  const Scenario own = resolved(settings);
  EXPECT_FALSE(own.parallel.embedding_as_stage || own.parallel.balanced_split);
  want.assign(16, 8);
  want.front() = 6;
  EXPECT_EQ(stage_layers(own), want);
  nlohmann::json nano = {
      {"model", "Llama-3.1-8B"}, {"framework", "nanotron"}, {"pp", 4}, {"pipeline_split", "even"}};
  EXPECT_FALSE(resolved(nano).parallel.compute_balanced_split);
  EXPECT_EQ(stage_layers(resolved(nano)), std::vector<int64_t>(4, 8));
  nano.erase("pipeline_split");
  nano["first_stage_layers"] = 5;  // used to clash with the compute-cost split
  EXPECT_EQ(stage_layers(resolved(nano)), (std::vector<int64_t>{5, 9, 9, 9}));
}

TEST(Frameworks, ExplicitSettingsWinOverThePreset) {
  const Scenario s = resolved(
      {{"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}, {"fsdp", "none"}, {"zero", 1}});
  EXPECT_EQ(s.parallel.fsdp, FsdpMode::kNone);
  EXPECT_EQ(s.parallel.zero, 1);
  EXPECT_EQ(s.conventions.gated_mlp_tensors, 4);  // conventions stay the framework's
}

TEST(Frameworks, HfTrainerKeepsBucketAndAutocastCopies) {
  const Scenario s =
      resolved({{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"}, {"gpus", 8}});
  const Estimate e = *estimate(s, {.explain = false});
  const int64_t params = e.parameters.total;
  EXPECT_EQ(row_bytes(e, "DDP gradient buckets"), params * 4);
  // The linear weights: not the embedding table (128,256 × 4,096) nor the 65 norms' weights.
  EXPECT_EQ(row_bytes(e, "autocast weight copies"), (params - 525'336'576 - 65 * 4096) * 2);
  EXPECT_EQ(row_bytes(e, "master weights"), -1);
  // One GPU: no data parallelism, so no DDP buckets.
  const Scenario one = resolved({{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"}});
  EXPECT_EQ(row_bytes(*estimate(one, {.explain = false}), "DDP gradient buckets"), -1);
}

int64_t allgather_buffer_bytes(const nlohmann::json& settings) {
  return row_bytes(*estimate(resolved(settings), {.explain = false}), "TP all-gather buffer");
}

TEST(Frameworks, NanotronKeepsOneAllGatherBufferOnlyWithSequenceParallelTp) {
  // Llama-3.1-8B, seq 4096, micro-batch 2: one microbatch's gathered input is
  // n·h·B = 8,192 tokens · 4,096 · 2 B, whatever the TP degree.
  nlohmann::json settings = {{"model", "Llama-3.1-8B"},
                             {"framework", "nanotron"},
                             {"seq_len", 4096},
                             {"micro_batch", 2},
                             {"tp", 4}};
  EXPECT_EQ(allgather_buffer_bytes(settings), int64_t{8192} * 4096 * 2);
  settings["tp"] = 8;
  EXPECT_EQ(allgather_buffer_bytes(settings), int64_t{8192} * 4096 * 2);
  // No all-gather without sequence parallelism or TP; no buffer when the gathered input is
  // saved instead (each linear allocates its own, counted in the activations).
  settings["sequence_parallel"] = false;
  EXPECT_EQ(allgather_buffer_bytes(settings), -1);
  settings.erase("sequence_parallel");
  settings["sp_saves_gathered_inputs"] = true;
  EXPECT_EQ(allgather_buffer_bytes(settings), -1);
  settings.erase("sp_saves_gathered_inputs");
  settings["tp"] = 1;
  EXPECT_EQ(allgather_buffer_bytes(settings), -1);
  // Megatron re-gathers into a fresh tensor: no persistent buffer.
  settings["tp"] = 4;
  settings["framework"] = "megatron";
  EXPECT_EQ(allgather_buffer_bytes(settings), -1);
}

TEST(Frameworks, SavedGatheredInputsCanBeSetOverThePreset) {
  // nanotron with tp_recompute_allgather: false saves each column-parallel input gathered. Per
  // layer, the QKV and MLP inputs go from n·h·B/8 to n·h·B: 2 · (1 − 1/8) · 4,096 · 4,096 · 2 B
  // more, over 32 layers (Llama-3.1-8B, seq 4096, micro-batch 1, tp 8).
  nlohmann::json settings = {{"model", "Llama-3.1-8B"}, {"framework", "nanotron"}, {"tp", 8}};
  const Estimate sharded = *estimate(resolved(settings), {.explain = false});
  settings["sp_saves_gathered_inputs"] = true;
  const Estimate gathered = *estimate(resolved(settings), {.explain = false});
  const int64_t input = int64_t{4096} * 4096 * 2;
  EXPECT_EQ(row_bytes(gathered, "activations") - row_bytes(sharded, "activations"),
            32 * 2 * (input - input / 8));
}

TEST(Frameworks, TorchtitanTensorParallelKeepsTheReplicatedInputsOfItsColumnLinears) {
  // torchtitan's PrepareModuleInput redistributes the norm outputs to Replicate before wq/wk/wv
  // and w1/w3, and the output projection gathers its input too: Llama-3.1-8B at tp 8 over 64
  // GPUs, seq 8192, micro-batch 2, full recompute, so outside the layer being recomputed only
  // the LM head's input is stored gathered.
  nlohmann::json settings = {{"model", "Llama-3.1-8B"},
                             {"framework", "torchtitan"},
                             {"tp", 8},
                             {"gpus", 64},
                             {"seq_len", 8192},
                             {"micro_batch", 2},
                             {"recompute", "full"}};
  const Estimate titan = *estimate(resolved(settings), {.explain = false});
  settings["sp_saves_gathered_inputs"] = false;
  const Estimate sharded = *estimate(resolved(settings), {.explain = false});
  ASSERT_EQ(titan.stages.front().peak_phase, "forward/backward");
  const int64_t input = int64_t{2 * 8192} * 4096 * 2;
  EXPECT_EQ(row_bytes(titan, "final norm + LM head inputs") -
                row_bytes(sharded, "final norm + LM head inputs"),
            input - input / 8);
  // The layer being recomputed holds the QKV and MLP inputs gathered as well (allocated, or
  // reserved beside the freed logits on this stage, which holds the LM head).
  auto working = [](const Estimate& e) {
    return std::max<int64_t>(row_bytes(e, "recompute working set"), 0) +
           std::max<int64_t>(row_bytes(e, "recompute working set (reserved beside the logits)"), 0);
  };
  EXPECT_EQ(working(titan) - working(sharded), 2 * (input - input / 8));
}

// Llama-3.1-8B on 16 GPUs with pp 2 (dp 8, FSDP): rank 0 holds 16 layers of 218,112,000
// parameters and the 525,336,576-parameter embedding (its largest unit), 4,015,128,576 in all.
constexpr int64_t kRank0Params = 16 * int64_t{218'112'000} + 525'336'576;
constexpr int64_t kEmbedding = 525'336'576;

int64_t phase_bytes(const StageEstimate& stage, const std::string& name) {
  for (const Phase& p : stage.phases)
    if (p.name == name) return p.allocated_bytes;
  return -1;
}

TEST(Frameworks, TorchtitanPipelineKeepsEachStageUnshardedWithFp32Gradients) {
  nlohmann::json settings = {{"model", "Llama-3.1-8B"},
                             {"framework", "torchtitan"},
                             {"gpus", 16},
                             {"pp", 2},
                             {"global_batch", 32}};
  const Estimate e = *estimate(resolved(settings), {.explain = false});
  // bf16 parameters and fp32 accumulated gradients of the whole stage, plus the bf16 gradient
  // of the unit computing; the sharded gradients only appear with the last reduce-scatter.
  EXPECT_EQ(row_bytes(e, "unsharded params + grads"), 6 * kRank0Params + 2 * kEmbedding);
  EXPECT_EQ(row_bytes(e, "gradients"), -1);
  EXPECT_EQ(row_bytes(e, "unsharded parameter buffers"), -1);
  // The optimizer step holds the sharded fp32 weights, gradients and Adam states (P/8 each,
  // Adam twice) and the GEMM workspaces: the stage was resharded by the last backward.
  const int64_t shard = kRank0Params / 8;
  EXPECT_EQ(phase_bytes(e.stages.front(), "optimizer step"), 4 * 4 * shard + (64 << 20));

  settings["fsdp"] = "none";  // plain DDP: nothing to keep unsharded
  EXPECT_EQ(
      row_bytes(*estimate(resolved(settings), {.explain = false}), "unsharded params + grads"), -1);
  settings["fsdp"] = "full_shard";
  settings["pipeline_fsdp_unsharded"] = false;  // back to one unit gathered at a time
  EXPECT_GT(
      row_bytes(*estimate(resolved(settings), {.explain = false}), "unsharded parameter buffers"),
      0);
}

TEST(Frameworks, ABackwardChunkByChunkHoldsOnlyTheLastChunksUnshardedGradients) {
  // vpp 2 over pp 2: rank 0 holds chunks 0 (the embedding and layers 0-7) and 2 (layers 16-23).
  // With 2 microbatches, one round, chunk 2 runs both its backwards and reduce-scatters before
  // chunk 0 starts; with 4, both chunks accumulate at once.
  nlohmann::json settings = {
      {"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}, {"gpus", 16}, {"pp", 2}, {"vpp", 2},
      {"global_batch", 16}};
  const int64_t last_chunk = 8 * int64_t{218'112'000};
  EXPECT_EQ(
      row_bytes(*estimate(resolved(settings), {.explain = false}), "unsharded params + grads"),
      2 * kRank0Params + 4 * last_chunk + 2 * kEmbedding);
  settings["global_batch"] = 32;
  EXPECT_EQ(
      row_bytes(*estimate(resolved(settings), {.explain = false}), "unsharded params + grads"),
      6 * kRank0Params + 2 * kEmbedding);
  settings["schedule"] = "gpipe";  // looped breadth-first: chunk by chunk whatever m
  EXPECT_EQ(
      row_bytes(*estimate(resolved(settings), {.explain = false}), "unsharded params + grads"),
      2 * kRank0Params + 4 * last_chunk + 2 * kEmbedding);
}

TEST(Frameworks, DeepSpeedBucketsOnlyWithZeroAndDataParallelism) {
  const Scenario s = resolved({{"model", "Llama-3.1-8B"}, {"framework", "deepspeed"}, {"gpus", 8}});
  EXPECT_EQ(row_bytes(*estimate(s, {.explain = false}), "communication buckets"),
            int64_t{500'000'000} * 2);
  const Scenario zero0 =
      resolved({{"model", "Llama-3.1-8B"}, {"framework", "deepspeed"}, {"gpus", 8}, {"zero", 0}});
  EXPECT_EQ(row_bytes(*estimate(zero0, {.explain = false}), "communication buckets"), -1);
}

TEST(Frameworks, DeepSpeedZero3KeepsItsLiveParametersGathered) {
  // Llama-3.1-70B, ZeRO-3 over 64 GPUs, bf16. The largest unit is the LM head with the final
  // norm, 1,050,681,344 parameters. FSDP-style release keeps it and one prefetched unit;
  // DeepSpeed keeps up to stage3_max_live_parameters = 1e9, less than those two units here.
  nlohmann::json settings = {{"model", "Llama-3.1-70B"}, {"gpus", 64}, {"zero", 3}};
  Scenario generic = resolved(settings);
  settings["framework"] = "deepspeed";
  Scenario ds = resolved(settings);
  EXPECT_EQ(ds.conventions.zero3_live_params, 1'000'000'000);
  const int64_t unit = 1'050'681'344;
  const int64_t grads = 2 * unit;  // one unit's bf16 gradients before their reduce-scatter
  // The gathered parameters and the unit's gradients (allocated, or reserved where the freed
  // logits hide them).
  auto buffers = [](const Scenario& s) {
    const Estimate e = *estimate(s, {.explain = false});
    return row_bytes(e, "unsharded parameter buffers") +
           std::max<int64_t>(row_bytes(e, "unit gradients (before reduce-scatter)"), 0) +
           std::max<int64_t>(row_bytes(e, "unit gradients (reserved beside the logits)"), 0);
  };
  EXPECT_EQ(buffers(generic), 2 * (2 * unit) + grads);
  EXPECT_EQ(buffers(ds), 2 * (2 * unit) + grads);    // max(2 units, 1e9) = 2 units
  ds.conventions.zero3_live_params = 3'000'000'000;  // a larger budget than two units
  EXPECT_EQ(buffers(ds), 2 * int64_t{3'000'000'000} + grads);
  // A budget above what the rank holds gathers the whole rank (70.6 B parameters).
  ds.conventions.zero3_live_params = int64_t{1} << 40;
  EXPECT_EQ(buffers(ds), 2 * int64_t{70'553'706'496} + grads);
}

TEST(Frameworks, SingleConventionsOverrideThePreset) {
  const Scenario s = resolved({{"model", "Llama-3.1-8B"},
                               {"framework", "megatron"},
                               {"loss_bytes_per_logit", 10},
                               {"lazy_gradients", true},
                               {"pipeline_keeps_stage_outputs", "true"}});
  EXPECT_EQ(s.conventions.loss_bytes_per_logit, 10);  // --cross-entropy-loss-fusion
  EXPECT_TRUE(s.conventions.lazy_gradients);
  EXPECT_TRUE(s.conventions.pipeline_keeps_stage_outputs);
  EXPECT_EQ(s.conventions.vocab_pad_multiple, 128);  // the rest stays Megatron's
  const Scenario titan = resolved(
      {{"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}, {"fsdp_mixed_precision", false}});
  EXPECT_FALSE(titan.conventions.fsdp_mixed_precision);
  EXPECT_TRUE(titan.conventions.lazy_gradients);
}

TEST(Frameworks, OutOfRangeConventionsNameTheField) {
  for (const auto& [key, value] : {std::pair<const char*, int>{"loss_bytes_per_logit", 0},
                                   {"loss_bytes_per_logit", 65},
                                   {"gated_mlp_tensors", 1},
                                   {"zero3_live_params", -1}}) {
    auto r = resolve_scenario({{"model", "Llama-3.1-8B"}, {key, value}},
                              [](const std::string&) -> Result<std::string> {
                                return Error{"model", "", "", ""};
                              });
    ASSERT_FALSE(r.ok()) << key;
    EXPECT_EQ(r.error().field, key);
    EXPECT_EQ(r.error().value, std::to_string(value));
  }
}

TEST(Frameworks, UnknownFrameworkIsAnErrorNamingTheChoices) {
  auto r = resolve_scenario({{"model", "Llama-3.1-8B"}, {"framework", "jax"}},
                            [](const std::string&) -> Result<std::string> {
                              return Error{"model", "", "", ""};
                            });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "framework");
  EXPECT_NE(r.error().accepted.find("hf-trainer"), std::string::npos);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

TEST(Phases, ForeachAdamCanMakeTheOptimizerStepThePeak) {
  // Short sequences, fp32 weights, foreach AdamW (the Trainer's "adamw_torch"): the step's
  // sqrt(v) temporary (4 B/param) outweighs the activations, so the high-water mark is the
  // optimizer step.
  const Scenario s = resolved({{"model", "Llama-3.1-8B"},
                               {"framework", "hf-trainer"},
                               {"optimizer_foreach_temporaries", true},
                               {"seq_len", 512}});
  const Estimate e = *estimate(s, {.explain = false});
  const StageEstimate& st = e.stages.front();
  EXPECT_EQ(st.peak_phase, "optimizer step");
  EXPECT_EQ(row_bytes(e, "optimizer step temporaries"), e.parameters.total * 4);
  EXPECT_EQ(row_bytes(e, "activations"), -1);  // freed before the step
  ASSERT_EQ(st.phases.size(), 3u);
  EXPECT_EQ(st.phases[1].allocated_bytes, st.allocated_bytes);
  EXPECT_GT(st.phases[1].allocated_bytes, st.phases[0].allocated_bytes);
}

TEST(Phases, FusedOptimizersPeakInTheBackwardAndTheFirstStepIsLighter) {
  const Scenario s = resolved({{"model", "Llama-3.1-8B"}, {"framework", "megatron"}});
  const Estimate e = *estimate(s, {.explain = false});
  const StageEstimate& st = e.stages.front();
  EXPECT_EQ(st.peak_phase, "forward/backward");
  ASSERT_EQ(st.phases.size(), 3u);
  EXPECT_EQ(st.phases[0].allocated_bytes, st.allocated_bytes);
  // Before the first optimizer step there are no optimizer states yet.
  EXPECT_EQ(st.phases[0].allocated_bytes - st.phases[2].allocated_bytes,
            row_bytes(e, "optimizer states"));
}

TEST(Phases, LazyGradientsAreAbsentWhileOneMicrobatchPeaks) {
  // torchtitan sets gradients to None after each step: with one microbatch per step the
  // forward/backward peak holds none, the optimizer step holds them all.
  const Scenario one = resolved(
      {{"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}, {"gpus", 8}, {"seq_len", 8192}});
  const Estimate e = *estimate(one, {.explain = false});
  const StageEstimate& st = e.stages.front();
  ASSERT_EQ(st.peak_phase, "forward/backward");
  EXPECT_EQ(row_bytes(e, "gradients"), -1);
  // Against a persistent buffer: the backward phase lacks exactly the gradients, the optimizer
  // step is the same.
  Scenario persistent = one;
  persistent.conventions.lazy_gradients = false;
  const Estimate p = *estimate(persistent, {.explain = false});
  const int64_t grads = row_bytes(p, "gradients");
  ASSERT_GT(grads, 0);
  EXPECT_EQ(p.stages.front().phases[0].allocated_bytes - st.phases[0].allocated_bytes, grads);
  EXPECT_EQ(p.stages.front().phases[1].allocated_bytes, st.phases[1].allocated_bytes);
  EXPECT_FALSE(e.warnings.empty());
  // Two microbatches: the first one's gradients are alive during the second's backward.
  Scenario two = one;
  two.training.global_batch = 16;
  const Estimate e2 = *estimate(two, {.explain = false});
  EXPECT_GT(row_bytes(e2, "gradients"), 0);
  // Megatron's main_grad buffer is persistent: gradients are always there.
  const Scenario mega = resolved({{"model", "Llama-3.1-8B"}, {"framework", "megatron"}});
  EXPECT_GT(row_bytes(*estimate(mega, {.explain = false}), "gradients"), 0);
}

TEST(Frameworks, MixedPrecisionFsdpGathersTheComputeDtype) {
  Scenario s = resolved({{"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}, {"gpus", 8}});
  auto buffers = [](const Scenario& sc) {  // gathered parameters and one unit's gradients
    const Estimate e = *estimate(sc, {.explain = false});
    return row_bytes(e, "unsharded parameter buffers") +
           std::max<int64_t>(row_bytes(e, "unit gradients (before reduce-scatter)"), 0) +
           std::max<int64_t>(row_bytes(e, "unit gradients (reserved beside the logits)"), 0);
  };
  const int64_t mixed = buffers(s);
  s.conventions.fsdp_mixed_precision = false;
  const int64_t stored = buffers(s);
  // Stored dtype: (1 + 1 prefetch)·4 B params + 4 B grads = 12 B per unit parameter; mixed
  // precision: 2·2 B bf16 params + (2 + 4) B grads = 10 B.
  ASSERT_GT(stored, 0);
  EXPECT_EQ(mixed * 12, stored * 10);
}

TEST(Frameworks, PipelineEnginesThatKeepSentOutputsHoldOnePerMicrobatchInFlight) {
  const Scenario s = resolved({{"model", "Llama-3.1-8B"},
                               {"framework", "nanotron"},
                               {"pp", 4},
                               {"gpus", 4},
                               {"global_batch", 16}});
  const Estimate e = *estimate(s, {.explain = false});
  const int64_t hidden_state = 4096 * 4096 * 2;  // n·h·B, tp 1
  const StageEstimate& first = e.stages.front();
  int64_t kept = -1;
  for (const Row& r : first.rows)
    if (r.component == "pipeline stage outputs") kept = r.bytes;
  EXPECT_EQ(kept, first.in_flight_microbatches * hidden_state);
  for (const Row& r : e.stages.back().rows)  // the last stage sends nothing
    EXPECT_NE(r.component, "pipeline stage outputs");
  // Megatron frees what it sent (deallocate_pipeline_outputs).
  const Scenario mega = resolved({{"model", "Llama-3.1-8B"},
                                  {"framework", "megatron"},
                                  {"pp", 4},
                                  {"gpus", 4},
                                  {"global_batch", 16}});
  const Estimate mega_estimate = *estimate(mega, {.explain = false});
  for (const Row& r : mega_estimate.stages.front().rows)
    EXPECT_NE(r.component, "pipeline stage outputs");
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

TEST(ModelCode, TransformersSetsItsConventionsOverTheFrameworkAndUnderSingleKeys) {
  // Hugging Face models under torchtitan's FSDP2 (the reference's FSDP rows): the layout is
  // torchtitan's, the layers transformers'.
  const Scenario s = resolved(
      {{"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}, {"model_code", "transformers"}});
  EXPECT_EQ(s.conventions.model_code, ModelCode::kTransformers);
  EXPECT_EQ(s.conventions.loss_bytes_per_logit, 12);
  EXPECT_EQ(s.conventions.gated_mlp_tensors, 4);
  EXPECT_EQ(s.parallel.fsdp, FsdpMode::kFullShard);
  // The Trainer and DeepSpeed run transformers' code; a single key still wins.
  EXPECT_EQ(
      resolved({{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"}}).conventions.model_code,
      ModelCode::kTransformers);
  EXPECT_EQ(
      resolved(
          {{"model", "Llama-3.1-8B"}, {"framework", "deepspeed"}, {"loss_bytes_per_logit", 10}})
          .conventions.loss_bytes_per_logit,
      10);
  // Without it, torchtitan keeps its own code's 10 B/logit.
  EXPECT_EQ(resolved({{"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}})
                .conventions.loss_bytes_per_logit,
            10);
  EXPECT_EQ(resolved({{"model", "Llama-3.1-8B"}}).conventions.model_code, ModelCode::kDefault);
}

TEST(Phases, AutocastCopiesAreGoneAtTheOptimizerStep) {
  // torch.autocast clears its cast cache when the forward's region exits; the casts then live
  // as saved tensors until the backward: the optimizer step holds weights, gradients and
  // states only.
  const Scenario s = resolved({{"model", "Llama-3.1-8B"},
                               {"framework", "hf-trainer"},
                               {"optimizer_foreach_temporaries", true},
                               {"seq_len", 512}});
  const Estimate e = *estimate(s, {.explain = false});
  EXPECT_EQ(e.stages.front().peak_phase, "optimizer step");
  EXPECT_EQ(row_bytes(e, "autocast weight copies"), -1);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

// Llama-3.1-8B with 4 layers over 2 pipeline stages, torchtitan's torch.distributed.pipelining
// with transformers' model code.
nlohmann::json llama_pipeline(const char* schedule, int64_t global_batch) {
  return {{"model", "Llama-3.1-8B"},
          {"framework", "torchtitan"},
          {"model_code", "transformers"},
          {"num_layers", 4},
          {"gpus", 2},
          {"pp", 2},
          {"fsdp", "none"},
          {"schedule", schedule},
          {"seq_len", 4096},
          {"global_batch", global_batch}};
}

TEST(Pipelining, TheLastStageKeepsEveryMicrobatchsLogitsAndOneLossBackward) {
  // torch.distributed.pipelining (torchtitan): the last stage appends each microbatch's output,
  // the logits, to output_chunks until the next step. With transformers' loss under GPipe every
  // microbatch keeps log_softmax's output (12 − 8 B per logit) and one backward at a time holds
  // the two fp32 gradients (8 B).
  nlohmann::json settings = llama_pipeline("gpipe", 4);
  const Estimate e = *estimate(resolved(settings), {.explain = false});
  const StageEstimate& last = e.stages.back();
  const int64_t logits = int64_t{4096} * 128256;  // n·V
  int64_t kept = -1, loss = -1;
  for (const Row& r : last.rows) {
    if (r.component == "pipeline outputs kept (logits)") kept = r.bytes;
    if (r.component == "logits + loss") loss = r.bytes;
  }
  EXPECT_EQ(kept, 4 * logits * 2);
  EXPECT_EQ(loss, 4 * logits * 4 + logits * 8);
  // Without the convention (another pipeline engine) nothing is kept past the backward.
  settings["pipeline_keeps_last_outputs"] = false;
  // Bind the estimate first: a range-for over a temporary's member would read freed memory.
  const Estimate plain = *estimate(resolved(settings), {.explain = false});
  for (const Row& r : plain.stages.back().rows)
    EXPECT_NE(r.component, "pipeline outputs kept (logits)");
}

// When the step returns, the last stage merges its kept outputs (torch.cat): with 8 microbatches
// of Llama-3.1-8B logits (8 × 0.98 GiB) and full recompute that second copy, beside every
// gradient and without the activations, is the peak: states + 2 × kept.
TEST(Pipelining, TheLastStageMergesItsKeptOutputsWhenTheStepReturns) {
  nlohmann::json settings = llama_pipeline("1f1b", 8);
  settings.update({{"recompute", "full"},
                   {"param_dtype", "bf16"},
                   {"grad_dtype", "bf16"},
                   {"optimizer_dtype", "bf16"},
                   {"master_weights", false}});
  const Estimate e = *estimate(resolved(settings), {.explain = false});
  const StageEstimate& last = e.stages.back();
  const int64_t kept = row_bytes_of(last, "pipeline outputs kept (logits)");
  EXPECT_EQ(kept, 8 * int64_t{4096} * 128256 * 2);
  EXPECT_EQ(row_bytes_of(last, "pipeline outputs merged (step's return)"), kept);
  EXPECT_EQ(row_bytes_of(last, "activations"), -1);  // gone by the end of the backward
  EXPECT_GT(row_bytes_of(last, "gradients"), 0);
  EXPECT_EQ(last.peak_phase, "forward/backward");
}

// torch's foreach Adafactor builds row_var @ col_var for every matrix at once: a gradient-sized
// temporary at the step, which is the peak of an MoE model whose parameters outweigh its
// activations (the reference's Mixtral row: 3 × its bf16 parameters).
TEST(Frameworks, ForeachAdafactorBuildsEveryMatrixsVarianceEstimateAtTheStep) {
  nlohmann::json settings = {{"model", "Mixtral-8x7B-v0.1"},
                             {"num_layers", 2},
                             {"seq_len", 4096},
                             {"param_dtype", "bf16"},
                             {"grad_dtype", "bf16"},
                             {"optimizer_dtype", "bf16"},
                             {"master_weights", false},
                             {"model_code", "transformers"},
                             {"optimizer", "adafactor"},
                             {"optimizer_foreach_temporaries", true}};
  const Estimate e = *estimate(resolved(settings), {.explain = false});
  const StageEstimate& st = e.stages.front();
  ASSERT_EQ(st.peak_phase, "optimizer step");
  EXPECT_EQ(row_bytes_of(st, "optimizer step temporaries"), row_bytes_of(st, "gradients"));
  settings["optimizer_foreach_temporaries"] = false;  // the for-loop implementation
  const Estimate loop = *estimate(resolved(settings), {.explain = false});
  EXPECT_EQ(row_bytes_of(loop.stages.front(), "optimizer step temporaries"), -1);
}

}  // namespace
}  // namespace vramplan
