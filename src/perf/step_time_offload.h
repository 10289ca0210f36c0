// What offloading adds to a training step (docs/offload.md "Step time"): the transfers between
// GPU and host (PCIe or NVLink-C2C) and NVMe that compute does not hide, and the optimizer step
// the CPU runs over the offloaded states.
#pragma once

#include <cstdint>
#include <optional>

#include "vramplan/base/error.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// One pipeline rank's figures the offload terms need.
struct OffloadRank {
  double optimizer_params = 0;  // parameters the rank's optimizer steps (its partition)
  double held_params = 0;       // parameters the rank holds between uses (its shard)
  double forward_s = 0;         // one microbatch's forward on the GPU, with its communication
  double backward_s = 0;        // one microbatch's backward (and recomputation)
  double activation_bytes = 0;  // saved activations of one microbatch on the rank
  // The optimizer's states per parameter: the fp32 master copy and the moments
  // (step_time.cc optimizer_state_bytes_per_param).
  double state_bytes_per_param = 0;
};

struct OffloadTime {
  double exposed_s = 0;            // per step: transfers not hidden + the CPU optimizer step
  double gpu_optimizer_share = 1;  // of the GPU optimizer step, what still runs on the GPU
};

// REQUIRES: the scenario validates (scenario_checks check_offload) and the cluster's bandwidths
// the offload uses are positive (offload_bandwidth_error says which is missing).
OffloadTime offload_time(const Scenario& s, const Cluster& cluster, const StepTimeConstants& c,
                         const OffloadRank& rank, double microbatches);

// The cluster setting an offloading scenario needs but lacks (host_link_gbps, host_memory_gbps,
// nvme_gbps), as an Error naming it; nullopt when the scenario offloads nothing or all are set.
std::optional<Error> offload_bandwidth_error(const Scenario& s, const Cluster& cluster);

}  // namespace vramplan
