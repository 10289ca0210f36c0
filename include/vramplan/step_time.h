// Training step time from the roofline: compute at a realistic fraction of peak, the
// communication each parallelism adds (inside a node over NVLink/NVSwitch, across nodes over the
// network), what of it overlaps, the pipeline bubble and recomputation -> tokens/s per GPU and
// MFU. The constants and their calibration are documented in README "Roofline and step time" and
// docs/accuracy.md.
#pragma once

#include <memory>

#include "vramplan/error.h"
#include "vramplan/hardware.h"
#include "vramplan/scenario.h"

namespace vramplan {

// The machines the GPUs sit in. Defaults come from the GPU catalog; CLI flags override them.
struct Cluster {
  int gpus_per_node = 8;
  double intra_node_gbps = 0;  // NVLink/NVSwitch bandwidth per GPU, GB/s, one direction
  double inter_node_gbps = 0;  // network bandwidth per GPU, GB/s (8×400 Gb/s IB = 50 GB/s/GPU)
};

// Seconds of one optimizer step on the slowest GPU, split by cause. Exposed (not overlapped)
// time only: the parts add up to step_time_s.
struct StepTime {
  double compute_s = 0;          // forward + backward of model FLOPs and memory-bound ops
  double recompute_s = 0;        // extra forward work for activation recomputation
  double tp_comm_s = 0;          // tensor/sequence-parallel all-gathers and reduce-scatters
  double cp_comm_s = 0;          // context-parallel K/V exchange not hidden behind attention
  double ep_comm_s = 0;          // expert-parallel all-to-all dispatch and combine
  double pp_bubble_s = 0;        // pipeline fill and drain, plus stage-to-stage sends
  double dp_comm_exposed_s = 0;  // gradient reduction + parameter gathers not hidden by compute
  double optimizer_s = 0;        // optimizer update (memory-bound over the local shard)
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;  // model FLOPs (6·N·tokens + attention, no recompute) / (time · peak bf16 · gpus)
};

struct StepTimeData;  // precomputed per-model coefficients (step_time.cc)

// Prepared once per (model, training, gpu, cluster); evaluate() is cheap (no allocation, no
// strings) because the planner calls it for up to millions of layouts.
class StepTimeModel {
 public:
  // Errors: the GPU has no peak TFLOP/s or HBM bandwidth, the cluster has no bandwidths, or the
  // model is one this model cannot time.
  static Result<StepTimeModel> prepare(const Scenario& base, const Gpu& gpu,
                                       const Cluster& cluster);
  // layout = base with parallelism / micro-batch / global batch / recompute changed. The layout
  // must be valid (validate_scenario passes); the model and sequence length must match base.
  StepTime evaluate(const Scenario& layout) const;

 private:
  explicit StepTimeModel(std::shared_ptr<const StepTimeData> data) : data_(std::move(data)) {}
  std::shared_ptr<const StepTimeData> data_;
};

// prepare + evaluate for one scenario (validates the scenario first).
Result<StepTime> estimate_step_time(const Scenario& s, const Gpu& gpu, const Cluster& cluster);

// The catalog's node: gpus_per_node, NVLink and network bandwidth per GPU.
Cluster default_cluster(const Gpu& gpu);

}  // namespace vramplan
