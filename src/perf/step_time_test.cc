#include "vramplan/perf/step_time.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/test_models.h"
#include "training/chunk_split.h"
#include "training/pipeline.h"
#include "vramplan/model/params.h"

namespace vramplan {
namespace {

const Gpu& h100() { return *builtin_gpus().find("h100-80gb"); }
const Cluster kCluster = default_cluster(*builtin_gpus().find("h100-80gb"));

Scenario llama8b(int64_t dp, int64_t global_batch) {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = 4096;
  s.parallel.dp = dp;
  s.training.global_batch = global_batch;
  return s;
}

// Every cost but the roofline's compute and memory time switched off: no kernel or CPU
// overhead, no latency, and communication (nearly) free.
StepTimeConstants ideal() {
  StepTimeConstants c;
  c.kernel_overhead_s = c.cpu_overhead_s = c.collective_overhead_s = 0;
  c.intra_latency_s = c.inter_latency_s = c.inter_p2p_latency_s = 0;
  return c;
}
const Cluster kFastCluster{8, 1e12, 1e12};

StepTime evaluate(const Scenario& s, const StepTimeConstants& c = {},
                  const Cluster& cluster = kCluster) {
  Result<StepTime> t = estimate_step_time(s, h100(), cluster, c);
  EXPECT_TRUE(t.ok()) << t.error().message();
  return t.ok() ? *t : StepTime{};
}

double parts(const StepTime& t) {
  return t.compute_s + t.recompute_s + t.tp_comm_s + t.cp_comm_s + t.ep_comm_s + t.cpu_bound_s +
         t.pp_bubble_s + t.dp_comm_exposed_s + t.optimizer_s;
}

TEST(StepTime, PartsAddUpAndRatesFollow) {
  Scenario s = llama8b(8, 256);
  s.parallel.tp = 2;
  s.parallel.dp = 4;
  s.parallel.pp = 2;
  s.parallel.zero = 1;
  const StepTime t = evaluate(s);
  EXPECT_GT(t.step_time_s, 0);
  EXPECT_NEAR(parts(t), t.step_time_s, 1e-12 * t.step_time_s);
  // 256 sequences of 4,096 tokens over 16 GPUs.
  EXPECT_NEAR(t.tokens_per_s_per_gpu, 256.0 * 4096 / (t.step_time_s * 16), 1e-6);
  EXPECT_GT(t.mfu, 0);
  EXPECT_LT(t.mfu, 1);
}

// MFU = model FLOPs / (time · peak · GPUs), model FLOPs = 6·(matmul weights)·tokens + 12·L·s²·h
// per sequence (attention without the causal halving), recomputation not counted.
TEST(StepTime, MfuCountsModelFlops) {
  Scenario s = llama8b(8, 64);
  s.training.recompute = Recompute::kFull;
  const StepTime t = evaluate(s);
  const ParamCounts p = count_parameters(s.model);
  double norms = static_cast<double>(p.final_norm);
  for (const LayerParams& layer : p.layers) norms += static_cast<double>(layer.norms);
  const double matmul_weights = static_cast<double>(p.total - p.embedding) - norms;
  const double per_sequence = 6 * matmul_weights * 4096 + 12.0 * 32 * 4096 * 4096 * 4096;
  EXPECT_NEAR(t.mfu * t.step_time_s * 989.4e12 * 8, 64 * per_sequence, 1e-9 * 64 * per_sequence);
}

TEST(StepTime, Fp8RecipesRunMatmulsAtTheFp8Peak) {
  // With an ideal cluster the step is compute: fp8 linears at twice the bf16 peak shorten it,
  // attention stays bf16 (so less than 2×), and MFU is still counted against the bf16 peak.
  Scenario s = llama8b(1, 1);
  const StepTime bf16 = evaluate(s, ideal(), kFastCluster);
  s.training.fp8 = Fp8Recipe::kTensorwise;
  const StepTime fp8 = evaluate(s, ideal(), kFastCluster);
  EXPECT_LT(fp8.compute_s, bf16.compute_s * 0.75);
  EXPECT_GT(fp8.compute_s, bf16.compute_s * 0.5);
  EXPECT_NEAR(fp8.mfu * fp8.step_time_s, bf16.mfu * bf16.step_time_s, 1e-9);
}

TEST(StepTime, MoreDataParallelismShortensTheStepForAFixedBatch) {
  double previous = INFINITY;
  for (int64_t dp : {1, 2, 4, 8, 16, 32}) {
    const StepTime t = evaluate(llama8b(dp, 64));
    EXPECT_LT(t.step_time_s, previous) << "dp " << dp;
    previous = t.step_time_s;
  }
}

// With free communication and no overheads the 1F1B bubble is (p−1)/m of the compute, and
// interleaving divides it by v.
TEST(StepTime, PipelineBubbleFormula) {
  Scenario s = llama8b(1, 16);
  s.parallel.pp = 4;
  const StepTime plain = evaluate(s, ideal(), kFastCluster);
  EXPECT_NEAR(plain.pp_bubble_s / plain.compute_s, 3.0 / 16, 1e-6);
  s.parallel.vpp = 2;
  s.parallel.schedule = Schedule::kInterleaved;
  const StepTime interleaved = evaluate(s, ideal(), kFastCluster);
  EXPECT_NEAR(interleaved.pp_bubble_s / interleaved.compute_s, 3.0 / (2 * 16), 1e-6);
}

TEST(StepTime, RecomputationAddsForwardWork) {
  Scenario s = llama8b(8, 64);
  const StepTime none = evaluate(s);
  s.training.recompute = Recompute::kSelective;
  const StepTime selective = evaluate(s);
  s.training.recompute = Recompute::kFull;
  const StepTime full = evaluate(s);
  EXPECT_EQ(none.recompute_s, 0);
  EXPECT_GT(selective.recompute_s, 0);
  EXPECT_GT(full.recompute_s, selective.recompute_s);
  // A forward pass is about a third of forward + backward.
  EXPECT_GT(full.recompute_s, 0.25 * full.compute_s);
  EXPECT_LT(full.recompute_s, 0.45 * full.compute_s);
  EXPECT_NEAR(full.mfu * full.step_time_s, none.mfu * none.step_time_s, 1e-9);
}

TEST(StepTime, TensorParallelismAcrossNodesCostsMore) {
  Scenario s = llama8b(1, 16);
  s.parallel.tp = 8;
  const StepTime one_node = evaluate(s, {}, Cluster{8, 450, 50});
  const StepTime two_nodes = evaluate(s, {}, Cluster{4, 450, 50});
  EXPECT_GT(two_nodes.tp_comm_s, one_node.tp_comm_s);
  EXPECT_EQ(two_nodes.compute_s, one_node.compute_s);
}

TEST(StepTime, ShardedDataParallelismGathersParameters) {
  Scenario s = llama8b(64, 64);
  const StepTime ddp = evaluate(s);
  s.parallel.zero = 3;
  const StepTime zero3 = evaluate(s);
  EXPECT_GT(zero3.dp_comm_exposed_s, ddp.dp_comm_exposed_s);
  EXPECT_LT(zero3.optimizer_s, ddp.optimizer_s);  // each rank updates 1/64 of the weights
}

TEST(StepTime, ExpertParallelismPaysAllToAll) {
  Scenario s;
  s.model = testing::tiny_moe();
  s.training.seq_len = 1024;
  s.parallel.dp = 8;
  const StepTime local = evaluate(s);
  s.parallel.ep = 8;
  const StepTime spread = evaluate(s);
  EXPECT_EQ(local.ep_comm_s, 0);
  EXPECT_GT(spread.ep_comm_s, 0);
}

// Combined 1F1B (ep_comm_overlap): each microbatch's all-to-all hides behind the paired
// microbatch's compute, so with a fast network only the microbatch without a partner pays it (one
// of 8 here); on a slow one what outlasts the compute stays exposed. Compute does not change.
TEST(StepTime, EpCommOverlapLeavesTheUnpairedMicrobatchExposed) {
  Scenario s;
  s.model = testing::tiny_moe();
  s.training.seq_len = 1024;
  s.parallel.dp = 8;
  s.parallel.ep = 8;
  s.training.global_batch = 64;  // 8 microbatches per rank
  const Cluster fast{8, 1e6, 1e6};
  const StepTime plain = evaluate(s, ideal(), fast);
  s.conventions.ep_comm_overlap = true;
  const StepTime overlapped = evaluate(s, ideal(), fast);
  EXPECT_GT(plain.ep_comm_s, 0);
  EXPECT_NEAR(overlapped.ep_comm_s, plain.ep_comm_s / 8, 1e-9 * plain.ep_comm_s);
  EXPECT_DOUBLE_EQ(overlapped.compute_s, plain.compute_s);
  // 1 GB/s: the all-to-all outlasts the compute; the overlap hides at most the compute.
  const Cluster slow{8, 1, 1};
  const StepTime slow_overlapped = evaluate(s, ideal(), slow);
  s.conventions.ep_comm_overlap = false;
  const StepTime slow_plain = evaluate(s, ideal(), slow);
  EXPECT_LT(slow_overlapped.ep_comm_s, slow_plain.ep_comm_s);
  EXPECT_GT(slow_overlapped.ep_comm_s, slow_plain.ep_comm_s / 8);
  EXPECT_LE(slow_plain.ep_comm_s - slow_overlapped.ep_comm_s, slow_plain.compute_s);
  // Without expert parallelism there is nothing to overlap.
  s.parallel.ep = 1;
  const StepTime local = evaluate(s);
  s.conventions.ep_comm_overlap = true;
  EXPECT_DOUBLE_EQ(evaluate(s).step_time_s, local.step_time_s);
}

// prepare() once, evaluate() any layout of the same model: the same answer as preparing it.
TEST(StepTimeModel, EvaluateMatchesEstimateForOtherLayouts) {
  Result<StepTimeModel> model = StepTimeModel::prepare(llama8b(1, 0), h100(), kCluster);
  ASSERT_TRUE(model.ok()) << model.error().message();
  for (int64_t tp : {1, 2, 8})
    for (int64_t pp : {1, 4})
      for (int64_t mb : {1, 2}) {
        Scenario s = llama8b(4, 128);
        s.parallel.tp = tp;
        s.parallel.pp = pp;
        s.training.micro_batch = mb;
        EXPECT_DOUBLE_EQ(model->evaluate(s).step_time_s, evaluate(s).step_time_s)
            << tp << " " << pp << " " << mb;
      }
}

// A cache reused across layouts that vary every dimension gives exactly the uncached times:
// what it keeps depends only on its key.
TEST(StepTimeModel, CacheGivesTheSameTimes) {
  Result<StepTimeModel> model = StepTimeModel::prepare(llama8b(1, 0), h100(), kCluster);
  ASSERT_TRUE(model.ok()) << model.error().message();
  StepTimeCache cache;
  int compared = 0;
  for (int64_t tp : {1, 2})
    for (int64_t cp : {1, 2})
      for (int64_t mb : {1, 2})
        for (int64_t pp : {1, 4})
          for (int64_t zero : {0, 3})
            for (Recompute rc : {Recompute::kNone, Recompute::kFull}) {
              Scenario s = llama8b(2, 64);
              s.parallel.tp = tp;
              s.parallel.sequence_parallel = tp > 1;
              s.parallel.cp = cp;
              s.parallel.pp = pp;
              s.parallel.zero = zero;
              s.training.micro_batch = mb;
              s.training.recompute = rc;
              const StepTime cached = model->evaluate(s, cache), fresh = model->evaluate(s);
              EXPECT_EQ(cached.step_time_s, fresh.step_time_s);
              EXPECT_EQ(cached.cp_comm_s, fresh.cp_comm_s);
              EXPECT_EQ(cached.pp_bubble_s, fresh.pp_bubble_s);
              ++compared;
            }
  EXPECT_EQ(compared, 64);
  // Another model's cache entry is never reused.
  Scenario other = llama8b(2, 64);
  other.training.seq_len = 2048;
  Result<StepTimeModel> short_model = StepTimeModel::prepare(other, h100(), kCluster);
  ASSERT_TRUE(short_model.ok());
  EXPECT_EQ(short_model->evaluate(other, cache).step_time_s,
            short_model->evaluate(other).step_time_s);
}

// Context parallelism is never free (Transformer Engine's ring: an attention kernel and its
// correction per extra step), and its key/value transfer hides behind attention only step by
// step: on a slow link the exposed part grows with the ring.
TEST(StepTime, ContextParallelismCostsItsRingSteps) {
  Scenario s = llama8b(4, 64);
  s.training.micro_batch = 2;
  const StepTime no_cp = evaluate(s);
  s.parallel.dp = 2;
  s.parallel.cp = 2;
  const StepTime cp2 = evaluate(s);
  EXPECT_EQ(no_cp.cp_comm_s, 0);
  EXPECT_GT(cp2.cp_comm_s, 0);
  // With no kernel cost and a near-free link, nothing is exposed.
  const StepTime ideal_cp = evaluate(s, ideal(), kFastCluster);
  EXPECT_NEAR(ideal_cp.cp_comm_s, 0, 1e-12);
  // Over a slow network (cp ranks on different nodes) the transfer outlasts each step's attention.
  const StepTime slow = evaluate(s, {}, Cluster{1, 1, 0.01});
  EXPECT_GT(slow.cp_comm_s, 10 * cp2.cp_comm_s);
}

// The interleaved schedule overlaps its steady-state sends with the chunks' compute
// (Megatron-LM's overlap_p2p_comm); 1F1B waits for them.
TEST(StepTime, InterleavedSendsHideBehindChunks) {
  Scenario s = llama8b(1, 32);
  s.parallel.pp = 4;
  s.parallel.vpp = 2;
  s.parallel.schedule = Schedule::kInterleaved;
  StepTimeConstants c = ideal();
  const Cluster slow_link{8, 1, 1};  // a send of 64 MiB takes about 0.07 s: longer than a chunk
  const StepTime exposed = evaluate(s, c, slow_link);
  const StepTime hidden = evaluate(s, c, kFastCluster);
  EXPECT_GT(exposed.pp_bubble_s, hidden.pp_bubble_s);
  // On the fast cluster only the fill and drain remain: (p−1)/(v·m) of the compute.
  EXPECT_NEAR(hidden.pp_bubble_s / hidden.compute_s, 3.0 / (2 * 32), 1e-6);
  // The wait on each receive's handle stays exposed: 2·v per microbatch, and each of the
  // 2·(p−1) fill and drain sends costs it too.
  c.collective_overhead_s = 1e-4;
  const StepTime waits = evaluate(s, c, kFastCluster);
  EXPECT_NEAR(waits.pp_bubble_s - hidden.pp_bubble_s, (32 * 2 * 2 + 2 * 3) * 1e-4, 1e-9);
}

TEST(StepTimeModel, ErrorsNameTheField) {
  const Scenario s = llama8b(8, 64);
  EXPECT_EQ(StepTimeModel::prepare(s, h100(), Cluster{8, 0, 50}).error().field, "intra_node_gbps");
  EXPECT_EQ(StepTimeModel::prepare(s, h100(), Cluster{8, 450, 0}).error().field, "inter_node_gbps");
  EXPECT_EQ(StepTimeModel::prepare(s, h100(), Cluster{0, 450, 50}).error().field, "gpus_per_node");
  EXPECT_EQ(StepTimeModel::prepare(s, custom_gpu(80), kCluster).error().field, "gpu");
  Scenario bad = s;
  bad.parallel.pp = 5;
  EXPECT_EQ(StepTimeModel::prepare(bad, h100(), kCluster).error().field, "pp");
}

TEST(StepTime, DefaultClusterFromTheCatalog) {
  const Cluster c = default_cluster(h100());
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.intra_node_gbps, 450);
  EXPECT_EQ(c.inter_node_gbps, 50);
}

// The closed-form chunk split agrees with the pipeline layout the memory estimate uses.
TEST(ChunkSplit, AgreesWithLayoutPipeline) {
  int checked = 0;
  for (int64_t layers : {7, 16, 30, 61})
    for (int64_t pp : {1, 2, 3, 4, 8})
      for (int64_t vpp : {1, 2})
        for (int variant = 0; variant < 7; ++variant) {
          Parallelism p;
          p.pp = pp;
          p.vpp = vpp;
          p.balanced_split = variant == 1;
          p.embedding_as_stage = p.loss_as_stage = variant == 2;
          if (variant == 3) p.first_stage_layers = vpp;
          if (variant == 4) p.last_stage_layers = 2;
          if (variant == 5) p.first_stage_layers = p.last_stage_layers = 2 * vpp;
          if (variant == 6) {  // an explicit layout: one layer per chunk, the rest on the last
            p.chunk_layers.assign(pp * vpp, 1);
            p.chunk_layers.back() = layers - (pp * vpp - 1);
          }
          if (validate_pipeline(layers, p)) continue;
          const std::vector<RankLayout> ranks = layout_pipeline(layers, p, 1);
          const ChunkSplit split(layers, p);
          for (int64_t r = 0; r < pp; ++r) {
            std::vector<int64_t> ids;
            for (int64_t j = 0; j < vpp; ++j) {
              const int64_t c = r + j * pp;
              for (int64_t i = 0; i < split.size(c); ++i) ids.push_back(split.begin(c) + i);
            }
            EXPECT_EQ(ids, ranks[r].layers) << layers << " layers, pp " << pp << " vpp " << vpp
                                            << " variant " << variant << " rank " << r;
          }
          ++checked;
        }
  EXPECT_GT(checked, 60);
}

TEST(ChunkSplit, FollowsNanotronsComputeCostSplit) {
  // Llama-3-8B's shape on 8 stages: 5, 4, 4, 5, 4, 4, 4, 2 (docs/frameworks.md), and 28 layers
  // over 16 stages, which an even split would not cover.
  for (const auto& [layers, pp] : {std::pair<int64_t, int64_t>{32, 8}, {28, 16}, {16, 4}}) {
    ModelConfig m = testing::llama8b_shape();
    m.num_layers = layers;
    m.layer_attention.assign(layers, LayerAttention::kFull);
    Parallelism p;
    p.pp = pp;
    p.compute_balanced_split = true;
    const std::vector<RankLayout> ranks = layout_pipeline(m, p, 1);
    const ChunkSplit split(m, p);
    int64_t covered = 0;
    for (int64_t r = 0; r < pp; ++r) {
      std::vector<int64_t> ids;
      for (int64_t i = 0; i < split.size(r); ++i) ids.push_back(split.begin(r) + i);
      EXPECT_EQ(ids, ranks[r].layers) << layers << " layers, pp " << pp << " rank " << r;
      covered += split.size(r);
    }
    EXPECT_EQ(covered, layers);
  }
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

// TP communication overlap (Transformer Engine userbuffers, torchtitan async TP): the TP
// collectives hide behind the layer's TP GEMMs, so only what outlasts them is exposed; compute
// does not change, and without TP the setting does nothing.
TEST(StepTime, TpCommOverlapExposesOnlyWhatOutlastsTheGemms) {
  Scenario s = llama8b(1, 8);
  s.parallel.tp = 8;
  const StepTime plain = evaluate(s);
  s.conventions.tp_comm_overlap = true;
  const StepTime overlapped = evaluate(s);
  EXPECT_GT(plain.tp_comm_s, 0);
  EXPECT_LT(overlapped.tp_comm_s, plain.tp_comm_s);
  EXPECT_DOUBLE_EQ(overlapped.compute_s, plain.compute_s);
  EXPECT_LT(overlapped.step_time_s, plain.step_time_s);
  // NVLink at 1 GB/s: the collectives outlast the GEMMs, and the overlap hides exactly the
  // GEMMs' time (forward and backward of every layer), never more.
  Cluster slow = kCluster;
  slow.intra_node_gbps = 1;
  const StepTime slow_overlapped = evaluate(s, {}, slow);
  s.conventions.tp_comm_overlap = false;
  const StepTime slow_plain = evaluate(s, {}, slow);
  EXPECT_GT(slow_overlapped.tp_comm_s, 0);
  EXPECT_LT(slow_overlapped.tp_comm_s, slow_plain.tp_comm_s);
  EXPECT_LT(slow_plain.tp_comm_s - slow_overlapped.tp_comm_s, slow_plain.compute_s);
  // One GPU: nothing to overlap.
  Scenario one = llama8b(1, 8);
  one.conventions.tp_comm_overlap = true;
  const StepTime alone = evaluate(one);
  one.conventions.tp_comm_overlap = false;
  EXPECT_DOUBLE_EQ(alone.step_time_s, evaluate(one).step_time_s);
}

// Per-layer CUDA graphs: the CPU issues a graph per layer and pass instead of every kernel, so a
// launch-bound step (short sequences, costly launches) loses most of its CPU-bound part; the
// GPU's own time does not change.
TEST(StepTime, CudaGraphsShrinkTheCpuBoundPart) {
  Scenario s = llama8b(1, 8);
  s.training.seq_len = 256;
  StepTimeConstants c;
  c.cpu_overhead_s = 1e-3;
  const StepTime eager = evaluate(s, c);
  s.overheads.per_layer_cuda_graphs = true;
  const StepTime graphed = evaluate(s, c);
  EXPECT_GT(eager.cpu_bound_s, 0);
  EXPECT_LT(graphed.cpu_bound_s, eager.cpu_bound_s / 4);
  EXPECT_DOUBLE_EQ(graphed.compute_s, eager.compute_s);
  EXPECT_LT(graphed.step_time_s, eager.step_time_s);
}

// The optimizer step streams its bytes at the measured optimizer_hbm_efficiency, not the fitted
// element-wise one; torch's foreach AdamW makes 20 accesses per parameter where the fused kernel
// makes 7.
TEST(StepTime, OptimizerStepUsesItsOwnRateAndForeachPasses) {
  const Scenario s = llama8b(8, 256);
  StepTimeConstants c = ideal();
  const double fused = evaluate(s, c).optimizer_s;
  EXPECT_GT(fused, 0);
  StepTimeConstants other_hbm = c;
  other_hbm.hbm_efficiency = c.hbm_efficiency / 2;
  EXPECT_DOUBLE_EQ(evaluate(s, other_hbm).optimizer_s, fused);
  StepTimeConstants slower = c;
  slower.optimizer_hbm_efficiency = c.optimizer_hbm_efficiency / 2;
  EXPECT_NEAR(evaluate(s, slower).optimizer_s, 2 * fused, 1e-12 * fused);
  Scenario foreach_adamw = s;
  foreach_adamw.conventions.optimizer_foreach_temporaries = true;
  EXPECT_NEAR(evaluate(foreach_adamw, c).optimizer_s, fused * 20 / 7, 1e-12 * fused);
}

// Few attention tiles (tensor parallelism leaves 4 heads, one sequence) leave SMs idle: the
// same layer's compute takes longer on a GPU whose SM count is known than on one without.
TEST(StepTime, FewAttentionTilesSlowTheStep) {
  Scenario s = llama8b(1, 8);
  s.parallel.tp = 8;
  Gpu unknown = h100();
  unknown.sm_count = 0;
  const StepTime known_sms = evaluate(s);
  Result<StepTime> no_sms = estimate_step_time(s, unknown, kCluster, StepTimeConstants{});
  ASSERT_TRUE(no_sms.ok()) << no_sms.error().message();
  EXPECT_GT(known_sms.compute_s, no_sms->compute_s);
  s.training.micro_batch = 8;  // 8 sequences: 512 tiles, more than 132 SMs
  s.training.global_batch = 64;
  const StepTime many = evaluate(s);
  Result<StepTime> many_no_sms = estimate_step_time(s, unknown, kCluster, StepTimeConstants{});
  ASSERT_TRUE(many_no_sms.ok());
  EXPECT_NEAR(many.compute_s, many_no_sms->compute_s, 1e-12 * many.compute_s);
}

}  // namespace
}  // namespace vramplan
