// What offloading adds to the step (perf/step_time_offload.h), checked against the formulas of
// docs/offload.md "Step time" worked by hand.
#include "perf/step_time_offload.h"

#include <gtest/gtest.h>

#include "model/test_models.h"
#include "vramplan/model/params.h"
#include "vramplan/perf/step_time.h"

namespace vramplan {
namespace {

const Gpu& h100() { return *builtin_gpus().find("h100-80gb"); }

Scenario llama8b_one_gpu() {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = 4096;
  s.training.global_batch = 8;
  s.training.micro_batch = 1;
  s.parallel.zero = 2;
  return s;
}

StepTime timed(const Scenario& s, const Cluster& cluster = default_cluster(h100())) {
  Result<StepTime> t = estimate_step_time(s, h100(), cluster);
  EXPECT_TRUE(t.ok()) << t.error().message();
  return t.ok() ? *t : StepTime{};
}

double sum_of_parts(const StepTime& t) {
  return t.compute_s + t.recompute_s + t.tp_comm_s + t.cp_comm_s + t.ep_comm_s + t.cpu_bound_s +
         t.pp_bubble_s + t.dp_comm_exposed_s + t.optimizer_s + t.offload_s;
}

TEST(StepTimeOffload, TheCatalogGivesTheHostLinkAndDram) {
  const Cluster c = default_cluster(h100());
  EXPECT_EQ(c.host_link_gbps, 64);     // PCIe 5.0 x16
  EXPECT_EQ(c.host_memory_gbps, 614);  // DGX H100: 2 × 8 channels of DDR5-4800
  EXPECT_EQ(c.nvme_gbps, kDefaultNvmeGbps);
}

// ZeRO-Offload on one GPU: the CPU Adam step streams 4 + 2 × 12 + 2 = 30 B per parameter at
// 60% of 614 GB/s; the bf16 parameters come back over 80% of the link; each microbatch's fp32
// gradients (N × 4 B, 0.63 s at 51.2 GB/s) go to the host beside that microbatch's backward.
TEST(StepTimeOffload, ZeroOffloadPaysTheCpuStepAndTheTransfers) {
  Scenario s = llama8b_one_gpu();
  const StepTime without = timed(s);
  s.offload.optimizer = OffloadTier::kCpu;
  const double n = static_cast<double>(count_parameters(s.model).total);
  const double cpu_step = n * 30 / (614e9 * 0.6);
  Cluster wide = default_cluster(h100());
  wide.host_link_gbps = 1e6;  // transfers ~free: the CPU step alone
  EXPECT_NEAR(timed(s, wide).offload_s, cpu_step + n * 2 / (1e15 * 0.8), 1e-9 * cpu_step);

  const StepTime with = timed(s);
  const double back = n * 2 / (64e9 * 0.8), to_host = n * 4 / (64e9 * 0.8);
  const double per_microbatch = with.compute_s / 8;  // forward + backward of one microbatch
  EXPECT_GE(with.offload_s, cpu_step + back + 8 * (to_host - per_microbatch));
  EXPECT_LE(with.offload_s, cpu_step + back + 8 * to_host);
  EXPECT_LT(with.optimizer_s, without.optimizer_s);  // the GPU steps nothing of it
  EXPECT_NEAR(with.compute_s, without.compute_s, 1e-12);
  EXPECT_NEAR(sum_of_parts(with), with.step_time_s, 1e-12 * with.step_time_s);
  EXPECT_EQ(without.offload_s, 0);
}

TEST(StepTimeOffload, APartialOffloadStepsTheRestOnTheGpu) {
  Scenario s = llama8b_one_gpu();
  s.parallel.zero = 0;
  s.parallel.distributed_optimizer = true;
  s.offload.optimizer = OffloadTier::kCpu;
  const StepTime all = timed(s);
  s.offload.optimizer_fraction = 0.5;
  const StepTime half = timed(s);
  EXPECT_LT(half.offload_s, all.offload_s);
  EXPECT_GT(half.optimizer_s, all.optimizer_s);
  // Megatron copies the gradients once, after the last backward: nothing hides them.
  const double n = static_cast<double>(count_parameters(s.model).total);
  EXPECT_GT(all.offload_s, n * 4 / (64e9 * 0.8));
}

TEST(StepTimeOffload, NvmeIsSlowerThanTheCpu) {
  Scenario s = llama8b_one_gpu();
  s.parallel.zero = 3;
  s.offload.optimizer = s.offload.params = OffloadTier::kCpu;
  const StepTime cpu = timed(s);
  s.offload.optimizer = s.offload.params = OffloadTier::kNvme;
  const StepTime nvme = timed(s);
  EXPECT_GT(nvme.offload_s, cpu.offload_s);
  Cluster fast = default_cluster(h100());
  fast.nvme_gbps = 2 * kDefaultNvmeGbps;
  EXPECT_LT(timed(s, fast).offload_s, nvme.offload_s);
}

// Parameters on the host come to the GPU twice per microbatch (2 × N × 2 B: 0.63 s for 8B),
// prefetched behind compute: a 32k-token microbatch hides them, a 512-token one does not. Kept
// on the host, the updated parameters are not copied back after the step.
TEST(StepTimeOffload, ParameterFetchesHideBehindLongMicrobatchesOnly) {
  Scenario s = llama8b_one_gpu();
  s.parallel.zero = 3;
  s.training.global_batch = 1;
  s.offload.optimizer = OffloadTier::kCpu;
  const double n = static_cast<double>(count_parameters(s.model).total);
  const double back = n * 2 / (64e9 * 0.8);
  for (int64_t seq : {32768, 512}) {
    s.training.seq_len = seq;
    s.offload.params = OffloadTier::kNone;
    const StepTime optimizer_only = timed(s);
    s.offload.params = OffloadTier::kCpu;
    const StepTime both = timed(s);
    const double fetch = both.offload_s - (optimizer_only.offload_s - back);
    if (seq == 32768)
      EXPECT_NEAR(fetch, 0, 1e-9) << seq;
    else
      EXPECT_GT(fetch, 0.5 * 2 * back) << seq;  // most of the 0.63 s exposed
  }
}

// Activation offloading moves every layer's saved tensors out and back: without checkpointing an
// 8B layer saves ~0.5 GiB at 4,096 tokens, five times what its compute hides; with full
// recomputation only the layer inputs (32 MiB) move, which hides.
TEST(StepTimeOffload, ActivationTransfersCostOnlyWhatComputeDoesNotHide) {
  Scenario s = llama8b_one_gpu();
  s.offload.activations = true;
  EXPECT_GT(timed(s).offload_s, 0);
  s.training.recompute = Recompute::kFull;
  EXPECT_EQ(timed(s).offload_s, 0);
  Cluster slow = default_cluster(h100());
  slow.host_link_gbps = 0.5;
  EXPECT_GT(timed(s, slow).offload_s, 0);
}

TEST(StepTimeOffload, AMissingBandwidthIsNamed) {
  Scenario s = llama8b_one_gpu();
  s.offload.optimizer = OffloadTier::kCpu;
  Cluster c = default_cluster(h100());
  c.host_memory_gbps = 0;
  Result<StepTime> t = estimate_step_time(s, h100(), c);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().field, "host_memory_gbps");
  c = default_cluster(h100());
  c.host_link_gbps = 0;
  t = estimate_step_time(s, h100(), c);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().field, "host_link_gbps");
  s.offload = Offload{};
  EXPECT_TRUE(estimate_step_time(s, h100(), c).ok());  // not needed without offload
}

}  // namespace
}  // namespace vramplan
