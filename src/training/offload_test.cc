// Offload (docs/offload.md): what each setting moves off the GPU, the staging buffers it adds,
// and the combinations the frameworks refuse.
#include <gtest/gtest.h>

#include <string>

#include "model/test_models.h"
#include "vramplan/training/estimate.h"

namespace vramplan {
namespace {

Scenario base() {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.parallel.dp = 8;
  return s;
}

Estimate run(const Scenario& s) {
  Result<Estimate> e = estimate(s);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  return e.ok() ? e.value() : Estimate{};
}

const Row* find(const StageEstimate& st, const std::string& component) {
  for (const Row& r : st.rows)
    if (r.component == component) return &r;
  return nullptr;
}

int64_t bytes(const StageEstimate& st, const std::string& component) {
  const Row* r = find(st, component);
  return r ? r->bytes : 0;
}

std::string error_field(const Scenario& s) {
  Result<Estimate> e = estimate(s);
  return e.ok() ? "" : e.error().field;
}

TEST(Offload, ZeroOffloadMovesStatesToHost) {
  Scenario s = base();
  s.parallel.zero = 3;
  const Estimate on_gpu = run(s);
  s.offload.optimizer = OffloadTier::kCpu;
  const Estimate off = run(s);
  const StageEstimate& a = on_gpu.stages[0];
  const StageEstimate& b = off.stages[0];
  // The optimizer's rows leave the GPU whole and reappear on the host, byte for byte.
  EXPECT_EQ(bytes(b, "optimizer states"), 0);
  EXPECT_EQ(bytes(b, "master weights"), 0);
  EXPECT_EQ(bytes(b, "optimizer states (offloaded)"), bytes(a, "optimizer states"));
  EXPECT_EQ(bytes(b, "master weights (offloaded)"), bytes(a, "master weights"));
  EXPECT_EQ(find(b, "optimizer states (offloaded)")->counts_toward, CountsToward::kHost);
  // ZeRO-3 with the optimizer offloaded keeps no gradient partition on the GPU; the host holds
  // it in fp32 (4 B per parameter of the rank's partition, as the master weights).
  EXPECT_EQ(bytes(b, "gradients"), 0);
  EXPECT_EQ(bytes(b, "gradients (host fp32 copy)"), bytes(a, "master weights"));
  EXPECT_GT(bytes(b, "offload gradient staging"), 0);
  EXPECT_LT(b.device_bytes, a.device_bytes);
  EXPECT_EQ(b.host_bytes, bytes(b, "optimizer states (offloaded)") +
                              bytes(b, "master weights (offloaded)") +
                              bytes(b, "gradients (host fp32 copy)"));
  EXPECT_EQ(off.peak.host_bytes, b.host_bytes);
  EXPECT_EQ(on_gpu.peak.host_bytes, 0);
}

// The caching allocator's pool grows with what lives on the GPU: offloaded rows (hundreds of GiB
// on the host or NVMe for a large model) must not inflate it.
TEST(Offload, AllocatorPoolCountsOnlyGpuRows) {
  Scenario s = base();
  s.parallel.zero = 3;
  s.offload.optimizer = OffloadTier::kNvme;
  s.offload.params = OffloadTier::kNvme;
  const StageEstimate st = run(s).stages[0];
  int64_t gpu_before_pool = 0;
  for (const Row& r : st.rows) {
    if (r.component == "allocator pool overhead") break;
    if (on_gpu(r.counts_toward)) gpu_before_pool += r.bytes;
  }
  ASSERT_GT(st.host_bytes + st.disk_bytes, gpu_before_pool);  // the case that went wrong
  EXPECT_EQ(
      bytes(st, "allocator pool overhead"),
      static_cast<int64_t>(static_cast<double>(gpu_before_pool) * s.overheads.allocator_fraction));
}

TEST(Offload, HostRowsAddToNoGpuTotal) {
  Scenario s = base();
  s.parallel.zero = 2;
  s.offload.optimizer = OffloadTier::kCpu;
  const StageEstimate st = run(s).stages[0];
  int64_t gpu = 0, host = 0;
  for (const Row& r : st.rows) (on_gpu(r.counts_toward) ? gpu : host) += r.bytes;
  EXPECT_EQ(gpu, st.device_bytes);
  EXPECT_EQ(host, st.host_bytes);
  // ZeRO-1/2 stage gradients through one pinned host buffer and one GPU buffer of the largest
  // parameter (the 128256 × 4096 embedding, bf16).
  EXPECT_EQ(bytes(st, "offload gradient staging"), int64_t{128256} * 4096 * 2);
  EXPECT_EQ(bytes(st, "offload gradient staging (pinned host)"), int64_t{128256} * 4096 * 2);
}

TEST(Offload, FractionSplitsTheOptimizer) {
  Scenario s = base();
  s.parallel.distributed_optimizer = true;
  const StageEstimate a = run(s).stages[0];
  s.offload.optimizer = OffloadTier::kCpu;
  s.offload.optimizer_fraction = 0.5;
  const StageEstimate b = run(s).stages[0];
  EXPECT_NEAR(bytes(b, "optimizer states"), bytes(a, "optimizer states") / 2, 1);
  EXPECT_EQ(bytes(b, "optimizer states") + bytes(b, "optimizer states (offloaded)"),
            bytes(a, "optimizer states"));
  // Megatron keeps its gradient buffer on the GPU.
  EXPECT_EQ(bytes(b, "gradients"), bytes(a, "gradients"));
}

TEST(Offload, ParamsToNvmeCountTowardDisk) {
  Scenario s = base();
  s.parallel.zero = 3;
  s.offload.optimizer = OffloadTier::kNvme;
  s.offload.params = OffloadTier::kNvme;
  const StageEstimate st = run(s).stages[0];
  EXPECT_EQ(bytes(st, "weights"), 0);
  ASSERT_NE(find(st, "weights (offloaded)"), nullptr);
  EXPECT_EQ(find(st, "weights (offloaded)")->counts_toward, CountsToward::kDisk);
  EXPECT_GT(st.disk_bytes, 0);
  EXPECT_EQ(bytes(st, "NVMe parameter swap buffers (pinned host)"), 5LL * 100'000'000 * 2);
  EXPECT_GT(bytes(st, "unsharded parameter buffers"), 0);  // the gathered units stay
}

TEST(Offload, FsdpOffloadMovesShardsAndGradients) {
  Scenario s = base();
  s.parallel.fsdp = FsdpMode::kFullShard;
  s.offload.optimizer = s.offload.params = OffloadTier::kCpu;
  const StageEstimate st = run(s).stages[0];
  EXPECT_EQ(bytes(st, "weights"), 0);
  EXPECT_EQ(bytes(st, "gradients"), 0);
  EXPECT_GT(bytes(st, "gradients (offloaded)"), 0);
  EXPECT_GT(bytes(st, "weights (offloaded)"), 0);
}

TEST(Offload, ActivationsKeepTwoLayersOnTheGpu) {
  Scenario s = base();
  s.training.recompute = Recompute::kFull;
  const StageEstimate a = run(s).stages[0];
  s.offload.activations = true;
  const StageEstimate b = run(s).stages[0];
  EXPECT_EQ(bytes(b, "activations") + bytes(b, "activations (offloaded)"), bytes(a, "activations"));
  EXPECT_EQ(bytes(b, "activations"), bytes(a, "activations") / 32 * 2);  // 2 of 32 inputs
}

TEST(Offload, InvalidCombinationsNameTheSetting) {
  Scenario s = base();
  s.offload.params = OffloadTier::kCpu;  // no ZeRO-3, no sharded FSDP
  EXPECT_EQ(error_field(s), "offload_params");
  s = base();
  s.offload.optimizer = OffloadTier::kCpu;  // nothing that can offload it
  EXPECT_EQ(error_field(s), "offload_optimizer");
  s = base();
  s.parallel.zero = 2;
  s.offload.optimizer = OffloadTier::kNvme;  // ZeRO-Infinity is stage 3
  EXPECT_EQ(error_field(s), "offload_optimizer");
  s = base();
  s.parallel.zero = 3;
  s.offload.optimizer = OffloadTier::kCpu;
  s.offload.optimizer_fraction = 0;
  EXPECT_EQ(error_field(s), "optimizer_offload_fraction");
  s.offload.optimizer_fraction = 0.5;
  s.offload.optimizer = OffloadTier::kNone;
  EXPECT_EQ(error_field(s), "optimizer_offload_fraction");
  s = base();
  s.parallel.fsdp = FsdpMode::kFullShard;
  s.offload.optimizer = OffloadTier::kCpu;  // FSDP has one knob: both or neither
  EXPECT_EQ(error_field(s), "offload_optimizer");
}

}  // namespace
}  // namespace vramplan
