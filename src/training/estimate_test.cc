#include "vramplan/training/estimate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/test_models.h"
#include "training/activations.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"

namespace vramplan {
namespace {

Scenario preset_scenario(const char* name) {
  Scenario s;
  s.model = testing::preset_model(name);
  return s;
}

Estimate run(const Scenario& s) {
  Result<Estimate> e = estimate(s);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  return e.ok() ? e.value() : Estimate{};
}

int64_t row(const StageEstimate& stage, const std::string& component) {
  for (const Row& r : stage.rows)
    if (r.component == component) return r.bytes;
  return 0;
}

int64_t states(const StageEstimate& st) {
  return row(st, "weights") + row(st, "gradients") + row(st, "master weights") +
         row(st, "optimizer states");
}

TEST(Estimate, ModelStatesOfMixedPrecisionAdam) {
  // Llama-3.1-8B, one GPU: bf16 weights 2 B + fp32 grads 4 B + fp32 master 4 B + Adam 8 B
  // = 18 B/param × 8,030,261,248 = 144,544,702,464 B.
  const Estimate e = run(preset_scenario("Llama-3.1-8B"));
  ASSERT_EQ(e.stages.size(), 1u);
  EXPECT_EQ(row(e.stages[0], "weights"), 2 * 8'030'261'248);
  EXPECT_EQ(states(e.stages[0]), 18 * 8'030'261'248);
}

TEST(Estimate, DistributedOptimizerShardsMasterAndMoments) {
  // 6 B unsharded (weights + fp32 grads) + 12 B / 8 → 7.5 B/param.
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.parallel.dp = 8;
  s.parallel.distributed_optimizer = true;
  const Estimate e = run(s);
  EXPECT_EQ(states(e.stages[0]), 6 * 8'030'261'248 + 12 * 8'030'261'248 / 8);
}

TEST(Estimate, ZeroThreeDividesModelStatesByRanks) {
  Scenario s = preset_scenario("Llama-3.1-8B");
  const int64_t whole = states(run(s).stages[0]);
  s.parallel.dp = 8;
  s.parallel.zero = 3;
  const Estimate e = run(s);
  EXPECT_NEAR(static_cast<double>(states(e.stages[0])), whole / 8.0, whole * 1e-6);
  EXPECT_GT(row(e.stages[0], "unsharded parameter buffers"), 0);
}

int64_t optimizer_step_bytes(const Estimate& e) {
  for (const Phase& p : e.stages.front().phases)
    if (p.name == "optimizer step") return p.allocated_bytes;
  return -1;
}

TEST(Estimate, MegatronFp16HandsTheOptimizerAnFp32GradientCopy) {
  // --fp16 without --accumulate-allreduce-grads-in-fp32: fp16 gradients (2 B), and at the step
  // main_grad.float() gives the optimizer 4 B per parameter it updates (sharded over dp with the
  // distributed optimizer). Llama-3.1-8B on one GPU: 2 + 2 + 4 + 8 B/param in the model states.
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.conventions.fp32_grad_copy = true;
  s.training.param_dtype = s.training.grad_dtype = s.training.activation_dtype = DType::kFp16;
  s.training.fp32_grad_accumulation = false;
  s.training.seq_len = 1024;
  const int64_t params = 8'030'261'248;
  const Estimate e = run(s);
  EXPECT_EQ(states(e.stages[0]), 16 * params);
  EXPECT_EQ(e.stages[0].peak_phase, "optimizer step");  // short sequence: the step peaks
  EXPECT_EQ(row(e.stages[0], "fp32 gradient copy"), 4 * params);
  Scenario without = s;
  without.conventions.fp32_grad_copy = false;
  EXPECT_EQ(optimizer_step_bytes(e) - optimizer_step_bytes(run(without)), 4 * params);
  EXPECT_EQ(row(run(without).stages[0], "fp32 gradient copy"), 0);
  // The distributed optimizer updates a 1/dp shard: the copy is the shard's.
  s.parallel.dp = without.parallel.dp = 8;
  s.parallel.distributed_optimizer = without.parallel.distributed_optimizer = true;
  EXPECT_EQ(optimizer_step_bytes(run(s)) - optimizer_step_bytes(run(without)), 4 * params / 8);
  // Gradients accumulated in fp32 need no copy.
  s.training.fp32_grad_accumulation = without.training.fp32_grad_accumulation = true;
  EXPECT_EQ(optimizer_step_bytes(run(s)), optimizer_step_bytes(run(without)));
}

TEST(Estimate, MegatronLocalAttentionKeepsOneLayersScoresBuffer) {
  // b·(a/t)·s²·B = 2·(32/2)·4096²·2 B = 1 GiB on every rank that holds a layer, in every phase;
  // only without flash attention and with the convention set (--transformer-impl local).
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.training.seq_len = 4096;
  s.training.micro_batch = 2;
  s.parallel.tp = 2;
  s.training.flash_attention = false;
  s.conventions.attention_scores_buffer = true;
  Estimate e = run(s);
  EXPECT_EQ(row(e.stages[0], "attention scores buffer"), int64_t{1} << 30);
  for (const Phase& p : e.stages[0].phases) EXPECT_GT(p.allocated_bytes, int64_t{1} << 30);
  s.training.flash_attention = true;
  EXPECT_EQ(row(run(s).stages[0], "attention scores buffer"), 0);
  s.training.flash_attention = false;
  s.conventions.attention_scores_buffer = false;
  EXPECT_EQ(row(run(s).stages[0], "attention scores buffer"), 0);
}

TEST(Estimate, Fp8CachesCastsOfTheLinearWeights) {
  // Llama-3.1-8B, one GPU: 32 layers × (attention 41,943,040 + MLP 176,160,768) = 6,979,321,856
  // linear weights; embedding, LM head and norms (1,051,201,536 + 266,240 + 4,096) stay bf16.
  const int64_t linear = 6'979'321'856, other = 8'030'261'248 - linear;
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.training.fp8 = Fp8Recipe::kTensorwise;
  const StageEstimate cached = run(s).stages[0];
  EXPECT_EQ(row(cached, "weights"), 2 * (linear + other));
  EXPECT_EQ(row(cached, "fp8 weight copies"), 2 * linear);    // row- and column-wise
  const std::vector<std::string> warnings = run(s).warnings;  // which fp8 stack is modelled
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("Transformer Engine") != std::string::npos;
  }));
  // fp8 primary weights: the linear weights are fp8 themselves, plus one column-wise copy.
  s.training.fp8_params = true;
  const StageEstimate native = run(s).stages[0];
  EXPECT_EQ(row(native, "weights"), 2 * other + linear);
  EXPECT_EQ(row(native, "fp8 weight copies"), linear);
  EXPECT_EQ(row(native, "master weights"), row(cached, "master weights"));
  // bf16 training has no such row.
  s.training.fp8 = Fp8Recipe::kNone;
  s.training.fp8_params = false;
  EXPECT_EQ(row(run(s).stages[0], "fp8 weight copies"), 0);
}

TEST(Estimate, PerLayerCudaGraphsReserveAFifthOfTheActivations) {
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.parallel.tp = 2;
  s.parallel.dp = 4;
  const StageEstimate eager = run(s).stages[0];
  s.overheads.per_layer_cuda_graphs = true;
  const StageEstimate graphs = run(s).stages[0];
  const int64_t pools = row(graphs, "CUDA-graph pools");
  EXPECT_EQ(pools, static_cast<int64_t>(row(eager, "activations") * 0.20));
  // Reserved: allocated (what torch.cuda.max_memory_allocated() sees) does not move.
  EXPECT_EQ(graphs.allocated_bytes, eager.allocated_bytes);
  EXPECT_EQ(graphs.reserved_bytes, eager.reserved_bytes + pools);
  // The figure is one published measurement, and the estimate says so.
  const std::vector<std::string> warnings = run(s).warnings;
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("CUDA-graph pools") != std::string::npos;
  }));
}

TEST(Estimate, GroupedGemmAddsFourWorkspacesOnRanksWithExperts) {
  Scenario s = preset_scenario("Qwen3-30B-A3B");
  s.parallel.ep = 8;
  s.parallel.dp = 8;
  const Estimate plain = run(s);
  s.training.moe_grouped_gemm = true;
  const Estimate grouped = run(s);
  const int64_t extra = 4 * (int64_t{32} << 20);  // TE: one 32 MiB workspace per stream
  EXPECT_EQ(row(grouped.stages[0], "GEMM workspaces"),
            row(plain.stages[0], "GEMM workspaces") + extra);
  EXPECT_EQ(grouped.peak.allocated_bytes, plain.peak.allocated_bytes + extra);
  // The row says where the bytes come from.
  for (const Row& r : grouped.stages[0].rows) {
    if (r.component == "GEMM workspaces") {
      EXPECT_NE(r.formula.find("4 streams × 32 MiB"), std::string::npos) << r.formula;
    }
  }

  // A dense model has no grouped GEMM: nothing changes, and the estimate says the flag is unused.
  Scenario dense = preset_scenario("Llama-3.1-8B");
  const int64_t before = run(dense).peak.allocated_bytes;
  dense.training.moe_grouped_gemm = true;
  const Estimate flagged = run(dense);
  EXPECT_EQ(flagged.peak.allocated_bytes, before);
  EXPECT_TRUE(std::any_of(flagged.warnings.begin(), flagged.warnings.end(), [](const auto& w) {
    return w.find("moe_grouped_gemm has no effect") != std::string::npos;
  }));
}

TEST(Estimate, GroupedGemmWorkspacesSkipStagesOfDenseLayers) {
  // DeepSeek-V3's first three layers are dense; a first stage of just those runs no grouped GEMM.
  Scenario s = preset_scenario("DeepSeek-V3");
  s.training.moe_grouped_gemm = true;
  s.parallel.pp = 2;
  s.parallel.first_stage_layers = 3;
  s.parallel.ep = 64;
  s.parallel.dp = 64;
  const Estimate e = run(s);
  ASSERT_EQ(e.stages.size(), 2u);
  EXPECT_EQ(row(e.stages[0], "GEMM workspaces"), s.overheads.gemm_workspace_bytes);
  EXPECT_EQ(row(e.stages[1], "GEMM workspaces"),
            s.overheads.gemm_workspace_bytes + 4 * (int64_t{32} << 20));
}

TEST(Estimate, MemoryGrowsWithSequenceAndMicroBatch) {
  Scenario s = preset_scenario("Qwen3-8B");
  int64_t previous = 0;
  for (int64_t seq : {1024, 2048, 4096, 8192}) {
    s.training.seq_len = seq;
    const int64_t peak = run(s).peak.allocated_bytes;
    EXPECT_GT(peak, previous) << seq;
    previous = peak;
  }
  previous = 0;
  for (int64_t mb : {1, 2, 4}) {
    s.training.micro_batch = mb;
    const int64_t peak = run(s).peak.allocated_bytes;
    EXPECT_GT(peak, previous) << mb;
    previous = peak;
  }
}

TEST(Estimate, MoreTensorParallelismNeverAddsWeights) {
  Scenario s = preset_scenario("Llama-3.1-70B");
  int64_t previous = INT64_MAX;
  for (int64_t tp : {1, 2, 4, 8}) {
    s.parallel.tp = tp;
    const int64_t weights = row(run(s).stages[0], "weights");
    EXPECT_LE(weights, previous) << tp;
    previous = weights;
  }
}

TEST(Estimate, QuantitiesNest) {
  for (const char* name : {"Llama-3.1-8B", "Mixtral-8x7B-v0.1", "DeepSeek-V2-Lite", "gpt2"}) {
    const Estimate e = run(preset_scenario(name));
    for (const StageEstimate& st : e.stages) {
      EXPECT_GT(st.allocated_bytes, 0) << name;
      EXPECT_LE(st.allocated_bytes, st.reserved_bytes) << name;
      EXPECT_LE(st.reserved_bytes, st.device_bytes) << name;
      for (const Row& r : st.rows) {
        EXPECT_GT(r.bytes, 0) << name << " " << r.component;
        EXPECT_FALSE(r.formula.empty()) << name << " " << r.component;
        EXPECT_FALSE(r.source.empty()) << name << " " << r.component;
      }
    }
  }
}

TEST(Estimate, PipelineStagesDifferAndThePeakIsNamed) {
  // 1F1B over 4 stages: the first keeps 4 microbatches, the last 1 plus the logits.
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.parallel.pp = 4;
  s.training.global_batch = 16;
  const Estimate e = run(s);
  ASSERT_EQ(e.stages.size(), 4u);
  EXPECT_EQ(e.stages[0].name, "stage 1 of 4 (first)");
  EXPECT_EQ(e.stages[3].name, "stage 4 of 4 (last)");
  EXPECT_EQ(e.stages[0].in_flight_microbatches, 4);
  EXPECT_GT(row(e.stages[3], "logits + loss"), 0);
  EXPECT_EQ(row(e.stages[0], "logits + loss"), 0);
  EXPECT_LT(e.peak.stage, e.stages.size());
  EXPECT_EQ(e.peak.device_bytes, e.stages[e.peak.stage].device_bytes);
}

TEST(Estimate, IdenticalMiddleStagesAreMerged) {
  // GPipe keeps every microbatch on every stage, so the middle stages are identical.
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.parallel.pp = 8;
  s.parallel.schedule = Schedule::kGPipe;
  s.training.global_batch = 8;
  const Estimate e = run(s);
  ASSERT_EQ(e.stages.size(), 3u);
  EXPECT_EQ(e.stages[1].name, "stages 2-7 of 8");
  EXPECT_EQ(e.stages[1].ranks.size(), 6u);
}

TEST(Estimate, FullRecomputeKeepsOnlyLayerInputs) {
  Scenario s = preset_scenario("Llama-3.1-8B");
  const int64_t stored = row(run(s).stages[0], "activations");
  s.training.recompute = Recompute::kFull;
  const Estimate e = run(s);
  // 32 layer inputs of n·h·2 = 32 · 4096·4096·2 = 1,073,741,824.
  EXPECT_EQ(row(e.stages[0], "activations"), 32LL * 4096 * 4096 * 2);
  EXPECT_LT(row(e.stages[0], "activations"), stored);
  // One layer's full activations are re-created during its backward. This stage also holds the
  // LM head, whose logits and loss (larger here) are freed before the first recompute: the
  // working set then adds to reserved memory, beside their segments, not to allocated.
  const int64_t working = row(e.stages[0], "recompute working set") +
                          row(e.stages[0], "recompute working set (reserved beside the logits)");
  EXPECT_EQ(working, layer_activations(s, false, false).bytes);
  EXPECT_EQ(row(e.stages[0], "recompute working set"),
            std::max<int64_t>(working - row(e.stages[0], "logits + loss"), 0));
  // Without the head (a first pipeline stage) all of it is allocated.
  s.parallel.pp = 2;
  const Estimate piped = run(s);
  EXPECT_EQ(row(piped.stages[0], "recompute working set"), working);
  EXPECT_EQ(row(piped.stages[0], "recompute working set (reserved beside the logits)"), 0);
}

TEST(Estimate, ExpertParallelismShardsExperts) {
  Scenario s = preset_scenario("Qwen3-30B-A3B");
  s.parallel.dp = 8;
  const int64_t replicated = row(run(s).stages[0], "weights");
  s.parallel.ep = 8;
  const int64_t sharded = row(run(s).stages[0], "weights");
  EXPECT_LT(sharded, replicated / 4);
}

TEST(Estimate, ExplainOffSkipsFormulasButNotBytes) {
  Scenario s = preset_scenario("Llama-3.1-8B");
  Result<Estimate> quiet = estimate(s, {.explain = false});
  ASSERT_TRUE(quiet.ok());
  const Estimate loud = run(s);
  EXPECT_EQ(quiet->peak.device_bytes, loud.peak.device_bytes);
  for (const Row& r : quiet->stages[0].rows) EXPECT_TRUE(r.formula.empty());
}

TEST(Estimate, AbsurdSizesAreErrorsNotOverflow) {
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.training.seq_len = int64_t{1} << 26;
  s.training.micro_batch = int64_t{1} << 20;
  Result<Estimate> e = estimate(s);
  ASSERT_FALSE(e.ok());
  EXPECT_FALSE(e.error().field.empty());
}

TEST(Estimate, EveryPresetEstimates) {
  for (const Preset& p : presets()) {
    Result<ParsedModel> parsed = parse_hf_config(p.config, p.name);
    ASSERT_TRUE(parsed.ok()) << p.name;
    Scenario s;
    s.model = parsed->model;
    Result<Estimate> e = estimate(s);
    ASSERT_TRUE(e.ok()) << p.name << ": " << e.error().message();
    EXPECT_GT(e->peak.allocated_bytes, 0) << p.name;
  }
}

// torch.distributed.pipelining's GPipe runs every forward before the first backward: with lazily
// created gradients the first stage peaks either with all microbatches and no gradients yet, or
// once the first backward has made the gradients and freed its microbatch's activations.
TEST(Estimate, GPipeWithLazyGradientsFreesOneMicrobatchBeforeTheGradientsExist) {
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.training.seq_len = 4096;
  s.training.micro_batch = 1;
  s.training.global_batch = 4;
  s.parallel.pp = 2;
  s.parallel.schedule = Schedule::kGPipe;
  s.conventions.lazy_gradients = false;
  const StageEstimate eager = run(s).stages.front();
  s.conventions.lazy_gradients = true;
  const StageEstimate lazy = run(s).stages.front();
  const int64_t activations = row(eager, "activations") + row(eager, "pipeline stage outputs") +
                              row(eager, "embedding activations");
  const int64_t one = activations / 4;
  ASSERT_EQ(eager.in_flight_microbatches, 4);
  EXPECT_EQ(lazy.allocated_bytes, eager.allocated_bytes - std::min(row(eager, "gradients"), one));
  // 1F1B keeps a microbatch in flight after the first backward: no change there.
  s.parallel.schedule = Schedule::k1F1B;
  const StageEstimate one_f_one_b = run(s).stages.front();
  s.conventions.lazy_gradients = false;
  EXPECT_EQ(one_f_one_b.allocated_bytes, run(s).stages.front().allocated_bytes);
}

int64_t phase_bytes(const StageEstimate& st, const std::string& name) {
  for (const Phase& p : st.phases)
    if (p.name == name) return p.allocated_bytes;
  return -1;
}

TEST(Estimate, RowsAtAPhaseShowThatPhasesBreakdown) {
  // Llama-3.1-8B on one GPU with lazily created gradients peaks at the optimizer step at 128
  // tokens; asked for the
  // forward/backward, the rows are that phase's: activations and no optimizer temporaries, their
  // sum the phase's total. Every phase's total is the same whichever rows are shown.
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.conventions.lazy_gradients = true;
  s.training.seq_len = 128;
  const Estimate peak = run(s);
  ASSERT_EQ(peak.stages[0].peak_phase, "optimizer step");
  Result<Estimate> fb = estimate(s, {.explain = false, .rows_at = RowsAt::kForwardBackward});
  ASSERT_TRUE(fb.ok());
  const StageEstimate& st = fb->stages[0];
  EXPECT_EQ(st.peak_phase, "forward/backward");
  EXPECT_GT(row(st, "activations"), 0);
  EXPECT_EQ(row(st, "optimizer step temporaries"), 0);
  EXPECT_EQ(st.allocated_bytes, phase_bytes(st, "forward/backward"));
  for (const char* phase : {"forward/backward", "optimizer step", "first step forward/backward"})
    EXPECT_EQ(phase_bytes(st, phase), phase_bytes(peak.stages[0], phase)) << phase;
  // And the optimizer step asked for where the forward/backward peaks (a long sequence).
  s.training.seq_len = 131072;
  ASSERT_EQ(run(s).stages[0].peak_phase, "forward/backward");
  Result<Estimate> step = estimate(s, {.explain = false, .rows_at = RowsAt::kOptimizerStep});
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->stages[0].peak_phase, "optimizer step");
  EXPECT_EQ(row(step->stages[0], "activations"), 0);
  EXPECT_EQ(step->stages[0].allocated_bytes, phase_bytes(step->stages[0], "optimizer step"));
}

TEST(Estimate, AutocastCopiesOnlyTheLinearWeights) {
  // torch.autocast caches a bf16 copy of each weight an op on its list uses: the linears (the LM
  // head included), not the embedding table (F.embedding) nor the norms' weights (multiplied).
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.conventions.autocast_weight_cache = true;
  s.training.param_dtype = s.training.grad_dtype = s.training.optimizer_state_dtype = DType::kFp32;
  s.training.master_weights = false;
  s.training.seq_len = 1024;
  const int64_t norms = 32 * 2 * 4096 + 4096;
  EXPECT_EQ(row(run(s).stages[0], "autocast weight copies"),
            2 * (8'030'261'248 - 525'336'576 - norms));
  // Tied embeddings: the table is also the LM head's weight, a linear's: it is cast.
  Scenario tied = preset_scenario("Llama-3.2-1B");
  tied.conventions = s.conventions;
  tied.training = s.training;
  EXPECT_EQ(row(run(tied).stages[0], "autocast weight copies"),
            int64_t{2} * (1'235'814'400 - (16 * 2 * 2048 + 2048)));
  // transformers' stacked experts run grouped_mm, on no autocast list: not cast.
  Scenario moe = preset_scenario("Qwen3-30B-A3B");
  moe.conventions = s.conventions;
  moe.training = s.training;
  const int64_t with_experts = row(run(moe).stages[0], "autocast weight copies");
  moe.conventions.model_code = ModelCode::kTransformers;
  const int64_t experts = int64_t{48} * 128 * 3 * 2048 * 768;
  EXPECT_EQ(with_experts - row(run(moe).stages[0], "autocast weight copies"), 2 * experts);
}

// torchtitan's TP (DTensor): the input embedding's gradient is whole on every TP rank unless FSDP
// shards the gradients or a tied head on the rank takes it in
// (Conventions::tp_embedding_grad_whole).
TEST(Estimate, TorchNativeTpKeepsTheEmbeddingGradientWhole) {
  Scenario s = preset_scenario("Llama-3.1-8B");
  s.training.grad_dtype = DType::kBf16;
  s.training.fp32_grad_accumulation = false;
  s.parallel.tp = 4;
  s.parallel.fsdp = FsdpMode::kNone;
  const int64_t plain = row(run(s).stages.front(), "gradients");
  s.conventions.tp_embedding_grad_whole = true;
  const int64_t whole = row(run(s).stages.front(), "gradients");
  const int64_t vocab = s.model.vocab, h = s.model.hidden;
  EXPECT_EQ(whole - plain, (vocab - vocab / 4) * h * 2);  // bf16: V·h less the V/4·h shard
  // FSDP reduce-scatters it to its shard.
  s.parallel.fsdp = FsdpMode::kFullShard;
  s.parallel.tp = 2;
  s.parallel.dp = 2;
  Scenario no_convention = s;
  no_convention.conventions.tp_embedding_grad_whole = false;
  EXPECT_EQ(row(run(s).stages.front(), "gradients"),
            row(run(no_convention).stages.front(), "gradients"));
  // A tied head on the same rank: its sharded gradient takes the embedding's in.
  Scenario tied = preset_scenario("Llama-3.2-1B");
  ASSERT_TRUE(tied.model.tied_embeddings);
  tied.parallel.tp = 2;
  tied.parallel.fsdp = FsdpMode::kNone;
  Scenario tied_whole = tied;
  tied_whole.conventions.tp_embedding_grad_whole = true;
  EXPECT_EQ(row(run(tied_whole).stages.front(), "gradients"),
            row(run(tied).stages.front(), "gradients"));
}

// QLoRA dequantizes one linear at a time in its forward and backward: the buffer is gone at the
// optimizer step (the reference's QLoRA rows: +5…+15% at the step before this).
TEST(Estimate, QloraDequantizedWeightIsNotHeldAtTheOptimizerStep) {
  Scenario s = preset_scenario("Mistral-7B-v0.3");
  s.finetune.method = FinetuneMethod::kQlora;
  Result<Estimate> step = estimate(s, {.rows_at = RowsAt::kOptimizerStep});
  ASSERT_TRUE(step.ok()) << step.error().message();
  const StageEstimate& st = step->stages.front();
  EXPECT_EQ(row(st, "dequantized weight buffer"), 0);
  int64_t rows = 0;
  for (const Row& r : st.rows)
    if (r.counts_toward == CountsToward::kAllocated) rows += r.bytes;
  EXPECT_EQ(optimizer_step_bytes(*step), rows);
  // forward/backward: one linear dequantized, 14,336 × 4,096 × 2 B, inside a layer: the logits
  // freed before it hide it, and its segments count toward reserved.
  const Estimate peak = run(s);
  EXPECT_EQ(row(peak.stages.front(), "dequantized weight buffer") +
                row(peak.stages.front(), "dequantized weight buffer (reserved beside the logits)"),
            int64_t{14336} * 4096 * 2);
}

}  // namespace
}  // namespace vramplan
