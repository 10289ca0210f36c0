// Training step time from the roofline: compute at a realistic fraction of peak, the
// communication each parallelism adds (inside a node over NVLink/NVSwitch, across nodes over the
// network), what of it overlaps, the pipeline bubble and recomputation -> tokens/s per GPU and
// MFU. The constants and their calibration are documented in docs/roofline.md and
// docs/accuracy.md.
#pragma once

#include <memory>
#include <optional>

#include "vramplan/base/error.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// The machines the GPUs sit in. Defaults come from the GPU catalog; CLI flags override them.
struct Cluster {
  int gpus_per_node = 8;
  double intra_node_gbps = 0;  // NVLink/NVSwitch bandwidth per GPU, GB/s, one direction
  double inter_node_gbps = 0;  // network bandwidth per GPU, GB/s (8×400 Gb/s IB = 50 GB/s/GPU)
  // Offload (docs/offload.md "Step time"); 0 = not known, needed only by a scenario that
  // offloads.
  double host_link_gbps = 0;    // GPU to host (PCIe x16, NVLink-C2C), GB/s one direction
  double host_memory_gbps = 0;  // the node's DRAM bandwidth, all sockets, GB/s
  double nvme_gbps = 0;         // the node's local NVMe read/write bandwidth, GB/s
};

// The NVMe bandwidth a node is assumed to have when none is given (--nvme-gbps): an assumption,
// not a measurement (docs/offload.md).
inline constexpr double kDefaultNvmeGbps = 25;

// Seconds of one optimizer step on the slowest GPU, split by cause. Exposed (not overlapped)
// time only: the parts add up to step_time_s.
struct StepTime {
  double compute_s = 0;          // forward + backward of model FLOPs and memory-bound ops
  double recompute_s = 0;        // extra forward work for activation recomputation
  double tp_comm_s = 0;          // tensor/sequence-parallel all-gathers and reduce-scatters
  double cp_comm_s = 0;          // context-parallel K/V exchange not hidden behind attention
  double ep_comm_s = 0;          // expert-parallel all-to-all dispatch and combine
  double cpu_bound_s = 0;        // the GPU waiting for the framework to issue kernels
  double pp_bubble_s = 0;        // pipeline fill and drain, plus stage-to-stage sends
  double dp_comm_exposed_s = 0;  // gradient reduction + parameter gathers not hidden by compute
  double optimizer_s = 0;        // optimizer update (memory-bound over the local shard)
  double offload_s = 0;  // host/NVMe transfers not hidden by compute + the CPU optimizer step
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;  // model FLOPs (6·N·tokens + attention, no recompute) / (time · peak bf16 · gpus)
};

// The few global constants that turn peak rates into achieved ones. Fitted, within ranges that
// are physically plausible for each, to the Ultra-Scale Playbook sweep (nanotron on H100 nodes):
// `vramplan validate --throughput --calibrate` refits them on two of its four models (1B, 8B;
// 3B and 80B are held out), never per model or per row; last refit 2026-11-27, after the model
// had changed (docs/roofline.md, "Refit"); the kernel-shape terms measured since are not refit
// (docs/roofline.md, "Kernel shapes", says why). Several ended at the edge of
// their range, and they describe nanotron's eager PyTorch on that cluster: a framework with
// fused kernels, CUDA graphs or overlapped communication (Megatron-LM with Transformer Engine)
// runs faster. See docs/roofline.md and docs/accuracy.md.
struct StepTimeConstants {
  // A GEMM of F FLOPs runs at matmul_efficiency of peak and pays kernel_overhead_s, i.e. at an
  // efficiency of matmul_efficiency·F/(F + matmul_efficiency·peak·kernel_overhead_s): small
  // GEMMs (thin TP shards, few tokens per expert) get a smaller fraction of peak.
  double matmul_efficiency = 0.65;     // range 0.30–0.85
  double attention_efficiency = 0.20;  // flash attention's fraction of peak; range 0.10–0.60
  // Achieved fraction of HBM bandwidth for the element-wise operations, as fitted: it also
  // stands for element-wise traffic the model does not count (nanotron's eager SwiGLU and fp32
  // loss); a single kernel reaches 0.89–0.91 on an H100 (docs/roofline.md, "Kernel shapes").
  double hbm_efficiency = 0.60;  // range 0.60–0.92
  // An optimizer step's achieved fraction of HBM bandwidth, measured, not fitted: torch's fused
  // AdamW on an H100, 0.5–2 B parameters, reaches 0.73–0.76 with fp32 states and 0.61–0.66 in
  // bf16, counting 7 accesses per parameter (reference/gpu_runs/
  // h100-2026-11-27-shapes-memory.jsonl).
  double optimizer_hbm_efficiency = 0.72;
  double kernel_overhead_s = 1e-6;  // per kernel on the GPU: launch gap, tail; 1–20 µs
  // CPU time the framework spends issuing one kernel or collective (eager PyTorch with
  // autograd). A microbatch takes max(GPU time, CPU time): small kernels leave the GPU waiting.
  double cpu_overhead_s = 131e-6;  // range 5–300 µs
  // Every collective also waits for the slowest rank of its group and for the framework to
  // issue it: a fixed cost on top of the alpha-beta ring time.
  double collective_overhead_s = 90e-6;  // range 5 µs–1 ms
  double intra_bw_efficiency = 0.90;     // achieved NVLink bus bandwidth / link; 0.30–0.90
  double inter_bw_efficiency = 0.90;     // achieved network bus bandwidth / NICs; 0.10–0.90
  double intra_latency_s = 100e-6;       // per ring step inside a node; 1–100 µs
  double inter_latency_s = 368e-6;       // per ring step across nodes; 5 µs–1 ms
  double inter_p2p_latency_s = 8.2e-3;   // a pipeline send between nodes; 10 µs–1 s
  // Offload (not fitted: no measurement in the calibration sets offloads). Pinned-memory copies
  // reach about 80% of a PCIe x16 link (≈25 GB/s on Gen4, ≈50 GB/s on Gen5: NVIDIA's
  // bandwidthTest / nvbandwidth); a CPU optimizer streams at about 60% of the node's DRAM peak
  // (STREAM reaches 70–80% on two-socket servers; the optimizer's reads and writes interleave).
  double host_link_efficiency = 0.8;
  double host_memory_efficiency = 0.6;
};

struct StepTimeData;       // precomputed per-model coefficients (step_time.cc)
struct StepTimeCacheData;  // perf/step_time_cache.h

// What the last layout evaluated with it computed, by what each part depends on: the section
// times (one layer of each kind, embedding, head: tp, sequence parallelism, cp, ep, etp and the
// micro-batch), the pipeline ranks' work (also pp, vpp, split, dp), the slowest rank (also the
// recompute mode) and the ranks' data-parallel and optimizer terms (the sharding instead). A
// caller that varies the inner dimensions in its inner loops (the planner: sp, micro-batch,
// recomputation, schedule, sharding) recomputes only what changed; the results are the same as
// without a cache. One per thread.
class StepTimeCache {
 public:
  StepTimeCache();
  ~StepTimeCache();
  StepTimeCache(StepTimeCache&&) noexcept;
  StepTimeCache& operator=(StepTimeCache&&) noexcept;

 private:
  friend class StepTimeModel;
  std::unique_ptr<StepTimeCacheData> d_;
};

// Prepared once per (model, training, gpu, cluster); evaluate() is cheap (no allocation, no
// strings) because the planner calls it for up to millions of layouts.
class StepTimeModel {
 public:
  // Errors: the GPU has no peak TFLOP/s or HBM bandwidth, the cluster has no bandwidths, or the
  // model is one this model cannot time.
  static Result<StepTimeModel> prepare(const Scenario& base, const Gpu& gpu, const Cluster& cluster,
                                       const StepTimeConstants& constants = {});
  // layout = base with parallelism / micro-batch / global batch / recompute changed. The layout
  // must be valid (validate_scenario passes); the model and sequence length must match base.
  StepTime evaluate(const Scenario& layout) const;
  // The same, reusing the section times `cache` holds when the layout allows (StepTimeCache).
  StepTime evaluate(const Scenario& layout, StepTimeCache& cache) const;
  // The same, or nullopt when the layout's tokens/s per GPU is certainly below `tokens_floor`:
  // the slowest rank's microbatches alone bound it (perf/step_time_parts.h first_parts_seconds),
  // and the rest of the step (pipeline bubble, data-parallel and optimizer terms) is skipped. It
  // skips only a layout that evaluate() would give a finite, positive speed; a caller that keeps
  // the fastest layouts (the planner) loses nothing by it.
  std::optional<StepTime> evaluate_unless_slower(const Scenario& layout, StepTimeCache& cache,
                                                 double tokens_floor) const;

 private:
  explicit StepTimeModel(std::shared_ptr<const StepTimeData> data) : data_(std::move(data)) {}
  std::shared_ptr<const StepTimeData> data_;
};

// prepare + evaluate for one scenario (validates the scenario first).
Result<StepTime> estimate_step_time(const Scenario& s, const Gpu& gpu, const Cluster& cluster,
                                    const StepTimeConstants& constants = {});

// The catalog's node: gpus_per_node, NVLink and network bandwidth per GPU.
Cluster default_cluster(const Gpu& gpu);

}  // namespace vramplan
