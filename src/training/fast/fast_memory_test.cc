#include "training/fast/fast_memory.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "model/test_models.h"
#include "training/pipeline.h"
#include "training/scenario_checks.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace {

ModelConfig preset_model(const char* name) {
  const Preset* preset = find_preset(name);
  EXPECT_NE(preset, nullptr) << name;
  Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
  EXPECT_TRUE(parsed.ok()) << name;
  return parsed->model;
}

template <class T, size_t N>
T pick(std::mt19937_64& rng, const T (&values)[N]) {
  return values[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

bool coin(std::mt19937_64& rng, double p = 0.5) { return std::bernoulli_distribution(p)(rng); }

// Training, precision, overheads and conventions: the parts a FastMemoryModel is prepared with.
Scenario random_base(const ModelConfig& model, std::mt19937_64& rng) {
  Scenario s;
  s.model = model;
  Training& t = s.training;
  t.seq_len = pick(rng, {1024, 2048, 4096, 8192, 96});
  t.global_batch = pick(rng, {0, 0, 64, 96, 256, 512});
  const DType dtypes[] = {DType::kBf16, DType::kBf16, DType::kFp32,
                          DType::kFp16, DType::kFp8,  DType::kFp4};
  t.param_dtype = pick(rng, dtypes);
  t.grad_dtype = pick(rng, dtypes);
  t.fp32_grad_accumulation = coin(rng, 0.7);
  t.master_weights = coin(rng, 0.8);
  t.optimizer_state_dtype = pick(rng, dtypes);
  t.activation_dtype = pick(rng, dtypes);
  t.optimizer = pick(
      rng, {Optimizer::kAdamW, Optimizer::kAdamW, Optimizer::kAdam8bit, Optimizer::kSgd,
            Optimizer::kSgdMomentum, Optimizer::kAdafactor, Optimizer::kLion, Optimizer::kMuon});
  t.recompute_layers = coin(rng, 0.8) ? 0 : pick(rng, {1, 2, 3});
  t.flash_attention = coin(rng, 0.8);
  t.dropout = coin(rng, 0.3);
  // A property of the run, like the dtypes; layouts it rejects (sharded parameters,
  // selective-op) are drawn again.
  t.fp8 = coin(rng, 0.3) ? pick(rng, {Fp8Recipe::kDelayed, Fp8Recipe::kTensorwise,
                                      Fp8Recipe::kBlockwise, Fp8Recipe::kMxfp8})
                         : Fp8Recipe::kNone;
  t.fp8_params = t.fp8 != Fp8Recipe::kNone && coin(rng);
  t.moe_grouped_gemm = coin(rng, 0.4);
  s.conventions.vocab_pad_multiple = pick(rng, {1, 1, 128, 64});
  s.conventions.gated_mlp_tensors = pick(rng, {3, 4});
  s.conventions.loss_bytes_per_logit = pick(rng, {6, 10, 0, 1});
  s.conventions.lazy_gradients = coin(rng, 0.3);
  s.conventions.fsdp_mixed_precision = coin(rng, 0.3);
  s.conventions.fsdp_root_unit = coin(rng, 0.3);
  s.conventions.pipeline_keeps_stage_outputs = coin(rng, 0.3);
  s.conventions.mha_keeps_packed_qkv = coin(rng, 0.3);
  s.conventions.sp_saves_gathered_inputs = coin(rng, 0.3);
  s.conventions.pipeline_fsdp_unsharded = coin(rng, 0.5);
  s.conventions.tp_embedding_grad_whole = coin(rng, 0.5);
  s.conventions.loss_chunks = pick(rng, {0, 0, 8, 3});
  s.conventions.zero3_live_params = coin(rng, 0.2) ? pick(rng, {1'000'000'000, 20'000'000}) : 0;
  s.overheads.allocator_fraction = pick(rng, {0.1, 0.0, 0.25, 0.3333});
  s.overheads.gemm_workspace_bytes = pick(rng, {int64_t{64} << 20, int64_t{96} << 20, int64_t{0}});
  s.overheads.nccl_bytes_per_group = pick(rng, {int64_t{512} << 20, int64_t{0}});
  return s;
}

// A layout drawn at random from a wide range; the caller keeps it when validate_scenario does.
void randomise_layout(Scenario& s, std::mt19937_64& rng) {
  Parallelism& p = s.parallel;
  p = Parallelism{};
  p.tp = pick(rng, {1, 1, 2, 4, 8, 3, 16});
  p.sequence_parallel = coin(rng, 0.7);
  p.pp = pick(rng, {1, 1, 2, 3, 4, 5, 8, 16});
  p.vpp = coin(rng, 0.6) ? 1 : pick(rng, {2, 3, 4});
  p.schedule = p.vpp > 1 ? (coin(rng, 0.8) ? Schedule::kInterleaved : Schedule::kGPipe)
                         : (coin(rng, 0.8) ? Schedule::k1F1B : Schedule::kGPipe);
  p.dp = pick(rng, {1, 2, 3, 4, 8, 16});
  p.cp = pick(rng, {1, 1, 2, 4});
  if (s.model.is_moe()) {
    p.ep = pick(rng, {1, 2, 4, 8, 16});
    p.etp = pick(rng, {1, 1, 2, 4});
  }
  switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
    case 0:
    case 1:
      p.zero = std::uniform_int_distribution<int>(0, 3)(rng);
      break;
    case 2:
      p.distributed_optimizer = true;
      break;
    case 3:
      p.fsdp = pick(rng, {FsdpMode::kFullShard, FsdpMode::kShardGradOp, FsdpMode::kNoShard});
      break;
    case 4:
      p.fsdp = FsdpMode::kHybridShard;
      p.fsdp_shard_group = pick(rng, {0, 2, 4});
      break;
    default:
      break;
  }
  p.fsdp_prefetch = pick(rng, {1, 1, 0, 2});
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0:
      p.balanced_split = true;
      break;
    case 1:
      p.embedding_as_stage = coin(rng);
      p.loss_as_stage = !p.embedding_as_stage || coin(rng);
      p.balanced_split = coin(rng);  // with both: torchtitan's split
      break;
    case 2: {
      const int64_t per_stage = s.model.num_layers / std::max<int64_t>(p.pp, 1);
      p.first_stage_layers = std::max<int64_t>(1, per_stage - pick(rng, {1, 2}));
      p.last_stage_layers = coin(rng) ? p.first_stage_layers : 0;
      break;
    }
    default:
      break;
  }
  s.training.micro_batch = pick(rng, {1, 1, 2, 4, 3});
  if (s.training.global_batch > 0 && s.training.global_batch % (s.training.micro_batch * p.dp) != 0)
    s.training.global_batch = s.training.micro_batch * p.dp * pick(rng, {1, 4, 16});
  s.training.recompute = pick(
      rng, {Recompute::kNone, Recompute::kSelective, Recompute::kFull, Recompute::kSelectiveOp});
  if (s.training.recompute != Recompute::kFull && s.training.recompute_layers > 0)
    s.training.recompute = Recompute::kFull;
}

std::string describe(const Scenario& s) {
  const Parallelism& p = s.parallel;
  const Training& t = s.training;
  return "tp" + std::to_string(p.tp) + (p.sequence_parallel ? " sp" : "") + " pp" +
         std::to_string(p.pp) + " vpp" + std::to_string(p.vpp) + " " + schedule_name(p.schedule) +
         " dp" + std::to_string(p.dp) + " cp" + std::to_string(p.cp) + " ep" +
         std::to_string(p.ep) + " etp" + std::to_string(p.etp) + " zero" + std::to_string(p.zero) +
         " fsdp=" + fsdp_name(p.fsdp) + " group" + std::to_string(p.fsdp_shard_group) +
         (p.distributed_optimizer ? " distopt" : "") + " first" +
         std::to_string(p.first_stage_layers) + " last" + std::to_string(p.last_stage_layers) +
         (p.embedding_as_stage ? " emb" : "") + (p.loss_as_stage ? " loss" : "") +
         (p.balanced_split ? " balanced" : "") + " mb" + std::to_string(t.micro_batch) + " gb" +
         std::to_string(t.global_batch) + " seq" + std::to_string(t.seq_len) +
         " fp8=" + fp8_recipe_name(t.fp8) + (t.fp8_params ? " fp8-params" : "") +
         " recompute=" + recompute_name(t.recompute) + "/" + std::to_string(t.recompute_layers) +
         " optimizer=" + optimizer_name(t.optimizer) +
         " dtypes p/g/o/a=" + std::string(dtype_name(t.param_dtype)) + "/" +
         std::string(dtype_name(t.grad_dtype)) + "/" +
         std::string(dtype_name(t.optimizer_state_dtype)) + "/" +
         std::string(dtype_name(t.activation_dtype)) +
         (t.fp32_grad_accumulation ? " fp32acc" : "") + (t.master_weights ? " master" : "") +
         (t.flash_attention ? " flash" : "") + (t.dropout ? " dropout" : "") +
         (t.moe_grouped_gemm ? " grouped-gemm" : "") + " pad" +
         std::to_string(s.conventions.vocab_pad_multiple) + " G" +
         std::to_string(s.conventions.gated_mlp_tensors) + " L" +
         std::to_string(s.conventions.loss_bytes_per_logit) + " C" +
         std::to_string(s.conventions.loss_chunks) +
         (s.conventions.sp_saves_gathered_inputs ? " gathered" : "") +
         (s.conventions.pipeline_fsdp_unsharded ? " pp-unsharded" : "") +
         (s.conventions.tp_embedding_grad_whole ? " whole-embedding-grad" : "") + " alloc" +
         std::to_string(s.overheads.allocator_fraction);
}

struct Compared {
  int layouts = 0;
  int fallbacks = 0;
  std::map<std::string, int> features;  // how many compared layouts used each feature
};

// Whether a rank's interleaved chunks hold different layers, so that its alive layers follow
// the schedule's order (pipeline.h in_flight_layers).
bool interleaved_unequal_chunks(const Scenario& s) {
  const Parallelism& p = s.parallel;
  if (p.schedule != Schedule::kInterleaved || p.vpp == 1 || validate_pipeline(s.model, p))
    return false;
  for (const RankLayout& r : layout_pipeline(s.model, p, microbatches_of(s))) {
    const auto held = static_cast<int64_t>(r.layers.size());
    if (r.in_flight_layers.peak * p.vpp != r.in_flight_chunks * held) return true;
  }
  return false;
}

void count_features(const Scenario& s, std::map<std::string, int>& features) {
  const Parallelism& p = s.parallel;
  const std::pair<const char*, bool> all[] = {
      {"pp", p.pp > 1},
      {"interleaved", p.schedule == Schedule::kInterleaved},
      {"gpipe", p.schedule == Schedule::kGPipe && p.pp > 1},
      {"tp+sp", p.tp > 1 && p.sequence_parallel},
      {"tp without sp", p.tp > 1 && !p.sequence_parallel},
      {"cp", p.cp > 1},
      {"ep", p.ep > 1},
      {"etp", p.etp > 1},
      {"zero1/distopt", p.zero == 1 || p.distributed_optimizer},
      {"zero3/fsdp full", p.zero == 3 || p.fsdp == FsdpMode::kFullShard},
      {"hybrid group", p.fsdp == FsdpMode::kHybridShard && p.fsdp_shard_group > 0},
      {"first/last layers", p.first_stage_layers > 0 || p.last_stage_layers > 0},
      {"embedding/loss stage", p.embedding_as_stage || p.loss_as_stage},
      {"balanced", p.balanced_split && p.pp > 1},
      {"selective", s.training.recompute == Recompute::kSelective},
      {"full", s.training.recompute == Recompute::kFull},
      {"selective-op", s.training.recompute == Recompute::kSelectiveOp},
      {"partial full", s.training.recompute_layers > 0},
      {"no flash", !s.training.flash_attention},
      {"dropout", s.training.dropout},
      {"lazy gradients, one microbatch", s.conventions.lazy_gradients && microbatches_of(s) == 1},
      {"mixed-precision fsdp",
       s.conventions.fsdp_mixed_precision && (p.zero == 3 || p.fsdp == FsdpMode::kFullShard)},
      {"fsdp root unit",
       s.conventions.fsdp_root_unit && p.fsdp != FsdpMode::kNone && sharding_of(p).params},
      {"fsdp shard_grad_op (all units gathered)", p.fsdp == FsdpMode::kShardGradOp},
      {"kept stage outputs", s.conventions.pipeline_keeps_stage_outputs && p.pp > 1},
      {"packed Q|K|V kept", holds_kv_twice(s)},
      {"tp+sp, gathered linear inputs",
       s.conventions.sp_saves_gathered_inputs && p.tp > 1 && p.sequence_parallel},
      {"pp stage kept unsharded", keeps_stage_unsharded(s.conventions, p, sharding_of(p).params)},
      {"pp stage kept unsharded, backward chunk by chunk",
       keeps_stage_unsharded(s.conventions, p, sharding_of(p).params) &&
           backward_chunk_by_chunk(p, microbatches_of(s))},
      {"tp, whole embedding gradient",
       s.conventions.tp_embedding_grad_whole && p.tp > 1 && !sharding_of(p).grads},
      {"fp8", s.training.fp8 != Fp8Recipe::kNone && !s.training.fp8_params},
      {"fp8 weights", s.training.fp8_params},
      {"grouped GEMM", s.training.moe_grouped_gemm && s.model.is_moe()},
      {"interleaved, chunks of unequal layers", interleaved_unequal_chunks(s)},
  };
  for (const auto& [name, used] : all) features[name] += used;
}

// Draws layouts until `wanted` valid ones have been compared with estimate().
Compared compare_random_layouts(const ModelConfig& model, uint64_t seed, int wanted) {
  std::mt19937_64 rng(seed);
  Compared out;
  for (int attempt = 0; out.layouts < wanted && attempt < wanted * 200; ++attempt) {
    Scenario s = random_base(model, rng);
    Result<FastMemoryModel> fast = FastMemoryModel::prepare(s);
    EXPECT_TRUE(fast.ok());
    if (!fast.ok()) return out;
    for (int tries = 0; tries < 40 && out.layouts < wanted; ++tries) {
      randomise_layout(s, rng);
      if (validate_scenario(s)) continue;
      const FastPeak got = fast->evaluate(s);
      Result<Estimate> want = estimate(s, {.explain = false});
      ++out.layouts;
      out.fallbacks += got.fallback;
      count_features(s, out.features);
      if (!want.ok()) {
        EXPECT_TRUE(got.overflow) << model.name << ": " << want.error().message();
        continue;
      }
      EXPECT_FALSE(got.overflow) << model.name;
      EXPECT_EQ(got.allocated_bytes, want->peak.allocated_bytes)
          << model.name << ": " << describe(s);
      EXPECT_EQ(got.reserved_bytes, want->peak.reserved_bytes) << model.name;
      EXPECT_EQ(got.device_bytes, want->peak.device_bytes) << model.name;
      if (got.device_bytes != want->peak.device_bytes) return out;  // one report is enough
    }
  }
  return out;
}

void expect_equal_to_estimate(const ModelConfig& model, uint64_t seed) {
  const Compared c = compare_random_layouts(model, seed, 3000);
  EXPECT_EQ(c.layouts, 3000) << model.name << ": too few valid layouts drawn";
  // Every feature was exercised (expert features only on MoE models).
  for (const auto& [name, count] : c.features) {
    const bool expert_only = name == "ep" || name == "etp" || name == "grouped GEMM";
    if (expert_only && !model.is_moe()) continue;
    const bool dense_standard = !model.is_moe() && model.attention != AttentionKind::kMla;
    if (name == "selective-op" && !dense_standard) continue;  // scenario_checks.cc rejects it there
    const bool needs_tp = name.rfind("tp", 0) == 0;
    if (needs_tp && model.attention == AttentionKind::kStandard && model.num_kv_heads == 1)
      continue;  // one KV head: tp = 1 only
    const bool mha =
        model.attention == AttentionKind::kStandard && model.num_kv_heads == model.num_heads;
    if (name == "packed Q|K|V kept" && !mha) continue;  // holds_kv_twice needs MHA
    EXPECT_GE(count, 5) << model.name << ": few layouts with " << name;
  }
  // The fast path itself must carry the comparison, not estimate() standing in for it.
  EXPECT_LT(c.fallbacks, c.layouts / 20) << model.name;
}

TEST(FastMemory, EqualsEstimateForDenseGqa) {
  expect_equal_to_estimate(preset_model("Llama-3.1-8B"), 1);
}
TEST(FastMemory, EqualsEstimateForMoe) {
  expect_equal_to_estimate(preset_model("Qwen3-30B-A3B"), 2);
}
TEST(FastMemory, EqualsEstimateForMlaMoeWithDenseLayers) {
  expect_equal_to_estimate(preset_model("DeepSeek-V2-Lite"), 3);
}
TEST(FastMemory, EqualsEstimateForMlaMoeWithMtp) {
  expect_equal_to_estimate(preset_model("DeepSeek-V3"), 4);
}
// The vision tower's weights sit on the first stage in both paths.
TEST(FastMemory, EqualsEstimateForAVisionLanguageModel) {
  expect_equal_to_estimate(preset_model("Qwen2.5-VL-7B-Instruct"), 10);
}
TEST(FastMemory, EqualsEstimateForPlainMlpLearnedPositions) {
  expect_equal_to_estimate(preset_model("gpt2"), 5);
}
TEST(FastMemory, EqualsEstimateForSandwichNormsQkNormAndSinks) {
  expect_equal_to_estimate(preset_model("gemma-3-1b-it"), 6);
  expect_equal_to_estimate(preset_model("gpt-oss-20b"), 7);
  expect_equal_to_estimate(preset_model("OLMo-2-1124-7B"), 8);
}
TEST(FastMemory, EqualsEstimateForTinyMoe) { expect_equal_to_estimate(testing::tiny_moe(), 9); }

TEST(FastMemory, GroupsRanksWithTheSameContent) {
  // Llama 8B shape, 32 layers over pp 4: first (embedding), two middle ranks alike, last (head).
  Scenario s;
  s.model = testing::llama8b_shape();
  s.parallel.pp = 4;
  Result<FastMemoryModel> fast = FastMemoryModel::prepare(s);
  ASSERT_TRUE(fast.ok());
  const PipelineShape shape = fast->shape(s.parallel);
  ASSERT_TRUE(shape.fast);
  ASSERT_EQ(shape.groups, 3);
  EXPECT_EQ(shape.group[0].first_rank, 0);
  EXPECT_TRUE(shape.group[0].has_embedding);
  EXPECT_EQ(shape.group[1].first_rank, 1);  // rank 2 holds the same and keeps fewer in flight
  EXPECT_EQ(shape.group[2].first_rank, 3);
  EXPECT_TRUE(shape.group[2].has_head);
  EXPECT_EQ(shape.group[1].stored_dense, 8);
}

TEST(FastMemory, LayoutsWithManyDistinctRanksFallBackToEstimate) {
  // 64 stages of 40 layers; stage r holds r % 40 MoE layers: 40 distinct stages, more than
  // kMaxRankGroups.
  Scenario s;
  s.model = testing::tiny_moe();
  s.model.num_layers = 64 * 40;
  s.model.moe_layers.clear();
  for (int i = 0; i < 64 * 40; ++i) s.model.moe_layers.push_back(i % 40 < (i / 40) % 40);
  s.model.layer_attention.assign(64 * 40, LayerAttention::kFull);
  s.parallel.pp = 64;
  ASSERT_FALSE(validate_scenario(s).has_value());
  Result<FastMemoryModel> fast = FastMemoryModel::prepare(s);
  ASSERT_TRUE(fast.ok());
  EXPECT_FALSE(fast->shape(s.parallel).fast);
  const FastPeak peak = fast->evaluate(s);
  EXPECT_TRUE(peak.fallback);
  EXPECT_EQ(peak.device_bytes, estimate(s)->peak.device_bytes);
}

TEST(FastMemory, GroupedGemmWorkspacesOnlyOnRanksWithExperts) {
  // DeepSeek-V3's first three layers are dense: with three of them on the first stage, that
  // stage runs no grouped GEMM and allocates no workspaces for it; the others do.
  Scenario s;
  s.model = preset_model("DeepSeek-V3");
  s.training.moe_grouped_gemm = true;
  s.parallel.pp = 2;
  s.parallel.first_stage_layers = 3;
  s.parallel.ep = 64;
  s.parallel.dp = 64;
  ASSERT_FALSE(validate_scenario(s).has_value());
  Result<FastMemoryModel> fast = FastMemoryModel::prepare(s);
  ASSERT_TRUE(fast.ok());
  const PipelineShape shape = fast->shape(s.parallel);
  ASSERT_TRUE(shape.fast);
  ASSERT_EQ(shape.groups, 2);
  std::array<RankStates, 2> states;
  fast->states_bytes(shape, s.parallel, states.data());
  EXPECT_EQ(states[0].workspaces, s.overheads.gemm_workspace_bytes);
  EXPECT_EQ(states[1].workspaces, s.overheads.gemm_workspace_bytes + (int64_t{128} << 20));
  const FastPeak peak = fast->evaluate(s);
  EXPECT_FALSE(peak.fallback);
  EXPECT_EQ(peak.device_bytes, estimate(s)->peak.device_bytes);
}

TEST(FastMemory, MegatronsGradientCopyAndScoresBufferGoToEstimate) {
  // Rows the fast path does not mirror: layouts with them are decided by estimate() itself.
  Scenario s;
  apply_framework(Framework::kMegatron, s);
  s.model = testing::llama8b_shape();
  s.training.seq_len = 2048;
  ASSERT_TRUE(FastMemoryModel::prepare(s)->fast());
  Scenario fp16 = s;
  fp16.training.param_dtype = fp16.training.grad_dtype = DType::kFp16;
  fp16.training.fp32_grad_accumulation = false;
  Scenario local = s;
  local.training.flash_attention = false;
  local.conventions.attention_scores_buffer = true;
  for (const Scenario& with : {fp16, local}) {
    Result<FastMemoryModel> fast = FastMemoryModel::prepare(with);
    ASSERT_TRUE(fast.ok());
    EXPECT_FALSE(fast->fast());
    const FastPeak peak = fast->evaluate(with);
    EXPECT_TRUE(peak.fallback);
    EXPECT_EQ(peak.device_bytes, estimate(with)->peak.device_bytes);
  }
}

TEST(FastMemory, OverflowIsReportedLikeEstimate) {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = int64_t{1} << 26;
  s.training.micro_batch = int64_t{1} << 20;
  s.training.flash_attention = false;
  Result<FastMemoryModel> fast = FastMemoryModel::prepare(s);
  ASSERT_TRUE(fast.ok());
  ASSERT_FALSE(estimate(s).ok());
  EXPECT_TRUE(fast->evaluate(s).overflow);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

// torchtitan's conventions (lazy gradients, mixed-precision FSDP, kept stage outputs) are
// mirrored by the fast path itself, so its planner searches stay fast.
TEST(FastMemory, TorchtitanConventionsStayOnTheFastPath) {
  Scenario s;
  apply_framework(Framework::kTorchtitan, s);
  s.model = testing::llama8b_shape();
  Result<FastMemoryModel> m = FastMemoryModel::prepare(s);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->fast());
  for (int64_t pp : {1, 4})
    for (int64_t global : {0, 64}) {
      s.parallel.pp = pp;
      s.parallel.dp = 8;
      s.training.global_batch = global;
      ASSERT_FALSE(validate_scenario(s).has_value());
      const FastPeak fast = m->evaluate(s);
      const Estimate est = *estimate(s, {.explain = false});
      EXPECT_FALSE(fast.fallback);
      EXPECT_EQ(fast.allocated_bytes, est.peak.allocated_bytes) << pp << " " << global;
      EXPECT_EQ(fast.device_bytes, est.peak.device_bytes) << pp << " " << global;
    }
}

// Framework conventions add rows the fast path does not mirror: it must hand those scenarios
// to estimate() rather than diverge.
TEST(FastMemory, FrameworkConventionsGoThroughEstimate) {
  for (Framework f : {Framework::kNanotron, Framework::kHfTrainer, Framework::kDeepspeed}) {
    Scenario s;
    apply_framework(f, s);
    s.model = testing::llama8b_shape();
    s.parallel.dp = 8;
    s.parallel.zero = 1;
    s.training.seq_len = 1024;
    Result<FastMemoryModel> m = FastMemoryModel::prepare(s);
    ASSERT_TRUE(m.ok());
    EXPECT_FALSE(m->fast()) << framework_name(f);
    const FastPeak fast = m->evaluate(s);
    const Estimate est = *estimate(s, {.explain = false});
    EXPECT_TRUE(fast.fallback);
    EXPECT_EQ(fast.allocated_bytes, est.peak.allocated_bytes) << framework_name(f);
    EXPECT_EQ(fast.device_bytes, est.peak.device_bytes) << framework_name(f);
  }
}

}  // namespace
}  // namespace vramplan
