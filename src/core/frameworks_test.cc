#include "vramplan/frameworks.h"

#include <gtest/gtest.h>

#include "core/test_models.h"
#include "vramplan/estimate.h"
#include "vramplan/scenario_io.h"

namespace vramplan {
namespace {

Scenario resolved(const nlohmann::json& settings) {
  auto r = resolve_scenario(settings, [](const std::string&) -> Result<std::string> {
    return Error{"model", "", "", "no files in tests"};
  });
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r->scenario;
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
  EXPECT_TRUE(nano.parallel.compute_balanced_split);
  const Scenario titan = resolved({{"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}});
  EXPECT_EQ(titan.parallel.fsdp, FsdpMode::kFullShard);
  EXPECT_EQ(titan.training.param_dtype, DType::kFp32);
  EXPECT_FALSE(titan.training.master_weights);
  const Scenario ds = resolved({{"model", "Llama-3.1-8B"}, {"framework", "DeepSpeed"}});
  EXPECT_EQ(ds.parallel.zero, 2);
  EXPECT_EQ(ds.conventions.comm_bucket_elements, 500'000'000);
  const Scenario hf = resolved({{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"}});
  EXPECT_TRUE(hf.conventions.ddp_bucket_copy);
  EXPECT_TRUE(hf.conventions.autocast_weight_cache);
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
  EXPECT_EQ(row_bytes(e, "autocast weight copies"), params * 2);
  EXPECT_EQ(row_bytes(e, "master weights"), -1);
  // One GPU: no data parallelism, so no DDP buckets.
  const Scenario one = resolved({{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"}});
  EXPECT_EQ(row_bytes(*estimate(one, {.explain = false}), "DDP gradient buckets"), -1);
}

TEST(Frameworks, DeepSpeedBucketsOnlyWithZeroAndDataParallelism) {
  const Scenario s = resolved({{"model", "Llama-3.1-8B"}, {"framework", "deepspeed"}, {"gpus", 8}});
  EXPECT_EQ(row_bytes(*estimate(s, {.explain = false}), "communication buckets"),
            int64_t{500'000'000} * 2);
  const Scenario zero0 =
      resolved({{"model", "Llama-3.1-8B"}, {"framework", "deepspeed"}, {"gpus", 8}, {"zero", 0}});
  EXPECT_EQ(row_bytes(*estimate(zero0, {.explain = false}), "communication buckets"), -1);
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
  // Short sequences, fp32 weights, foreach AdamW: the step's sqrt(v) temporary (4 B/param)
  // outweighs the activations, so the high-water mark is the optimizer step.
  const Scenario s =
      resolved({{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"}, {"seq_len", 512}});
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

}  // namespace
}  // namespace vramplan
