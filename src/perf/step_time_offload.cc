#include "perf/step_time_offload.h"

#include <fmt/format.h>

#include <algorithm>

#include "vramplan/model/precision.h"

namespace vramplan {
namespace {

double bytes_per_element(DType t) { return static_cast<double>(bits_of(t)) / 8.0; }

// Which framework's offload runs (scenario_checks.cc check_offload allows no other).
enum class Mechanism { kDeepSpeed, kFsdp, kMegatron };
Mechanism mechanism_of(const Parallelism& p) {
  if (p.zero > 0) return Mechanism::kDeepSpeed;
  if (p.fsdp != FsdpMode::kNone) return Mechanism::kFsdp;
  return Mechanism::kMegatron;
}

struct Rates {
  double link = 0;  // bytes/s achieved between one GPU and the host, each direction
  double host = 0;  // bytes/s of host DRAM bandwidth one rank's CPU optimizer gets
  double nvme = 0;  // bytes/s of NVMe one rank gets
};

Rates rates_of(const Scenario& s, const Cluster& cluster, const StepTimeConstants& c) {
  // The ranks of a node share its DRAM and its NVMe drives; each GPU has its own host link.
  const double ranks_per_node =
      static_cast<double>(std::min<int64_t>(cluster.gpus_per_node, s.parallel.world_size()));
  return {cluster.host_link_gbps * 1e9 * c.host_link_efficiency,
          cluster.host_memory_gbps * 1e9 * c.host_memory_efficiency / ranks_per_node,
          cluster.nvme_gbps * 1e9 / ranks_per_node};
}

// The optimizer's offloaded share f (DeepSpeed ZeRO-Offload, FSDP CPUOffload, Megatron's
// HybridDeviceOptimizer): its gradients go to the host, the CPU steps them, the updated
// parameters come back.
double optimizer_offload_s(const Scenario& s, const Rates& r, const OffloadRank& rank,
                           double microbatches) {
  const Offload& o = s.offload;
  const Training& tr = s.training;
  const double offloaded = rank.optimizer_params * o.optimizer_fraction;
  // The host's gradient partition is fp32 under mixed precision (DeepSpeed's fp32 partition,
  // FSDP's fp32 sharded gradients, Megatron's main_grad): the copy converts on the GPU first.
  const double grad_bytes = keeps_master_weights(tr) ? 4.0 : bytes_per_element(tr.grad_dtype);
  const double to_host = offloaded * grad_bytes / r.link;
  double seconds = 0;
  if (mechanism_of(s.parallel) == Mechanism::kMegatron) {
    // HybridDeviceOptimizer copies the gradients once, after the last backward
    // (--overlap-cpu-optimizer-d2h-h2d is off by default).
    seconds += to_host;
  } else {
    // DeepSpeed (stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu, stage3.py
    // partition_grads) and FSDP move each microbatch's reduced gradients to the host as the
    // backward produces them, on a side stream: exposed beyond that backward.
    seconds += microbatches * std::max(0.0, to_host - rank.backward_s);
  }
  // The CPU optimizer streams through host DRAM (DeepSpeedCPUAdam, torch's CPU AdamW,
  // Megatron's CPU optimizer), bandwidth-bound: the gradient read, the states read and written,
  // the updated working weights written.
  const double param_bytes = bytes_per_element(tr.param_dtype);
  const double streamed = grad_bytes + 2 * rank.state_bytes_per_param + param_bytes;
  seconds += offloaded * streamed / r.host;
  if (o.optimizer == OffloadTier::kNvme) {
    // ZeRO-Infinity swaps the states in before the step and out after it
    // (partitioned_optimizer_swapper.py; pipeline_read / pipeline_write are off by default).
    seconds += 2 * offloaded * rank.state_bytes_per_param / r.nvme;
  }
  // Where the parameters live on the GPU, the updated ones are copied back before the next
  // forward (DeepSpeed stage 1/2 and stage 3 without offload_param, Megatron).
  if (o.params == OffloadTier::kNone) seconds += offloaded * param_bytes / r.link;
  return seconds;
}

// Parameters kept on the host (ZeRO-3 offload_param, FSDP CPUOffload): each unit's shard comes
// to the GPU before its all-gather in the forward and again in the backward, every microbatch,
// prefetched beside the previous unit's compute.
double params_offload_s(const Scenario& s, const Rates& r, const OffloadRank& rank,
                        double microbatches) {
  const bool nvme = s.offload.params == OffloadTier::kNvme;
  const double rate = nvme ? std::min(r.link, r.nvme) : r.link;
  const double fetch = 2 * rank.held_params * bytes_per_element(s.training.param_dtype) / rate;
  return microbatches * std::max(0.0, fetch - (rank.forward_s + rank.backward_s));
}

// Activation offloading (torchtune OffloadActivations, Megatron fine-grained activation
// offloading): saved tensors go to the host on a side stream as the forward leaves each layer and
// come back one layer ahead of the backward.
double activations_offload_s(const Rates& r, const OffloadRank& rank, double microbatches) {
  const double each_way = rank.activation_bytes / r.link;
  return microbatches *
         (std::max(0.0, each_way - rank.forward_s) + std::max(0.0, each_way - rank.backward_s));
}

}  // namespace

OffloadTime offload_time(const Scenario& s, const Cluster& cluster, const StepTimeConstants& c,
                         const OffloadRank& rank, double microbatches) {
  OffloadTime out;
  const Offload& o = s.offload;
  if (!o.any()) return out;
  const Rates r = rates_of(s, cluster, c);
  if (o.optimizer != OffloadTier::kNone) {
    out.exposed_s += optimizer_offload_s(s, r, rank, microbatches);
    out.gpu_optimizer_share = 1.0 - o.optimizer_fraction;
  }
  if (o.params != OffloadTier::kNone) out.exposed_s += params_offload_s(s, r, rank, microbatches);
  if (o.activations) out.exposed_s += activations_offload_s(r, rank, microbatches);
  return out;
}

std::optional<Error> offload_bandwidth_error(const Scenario& s, const Cluster& cluster) {
  const Offload& o = s.offload;
  auto missing = [](const char* key, double value, const char* what) {
    return Error{
        key, fmt::format("{:g}", value), "a positive bandwidth in GB/s",
        fmt::format("needed for the step time of {}; the GPU's catalog entry gives none", what)};
  };
  if (o.any() && !(cluster.host_link_gbps > 0))
    return missing("host_link_gbps", cluster.host_link_gbps, "offloading");
  if (o.optimizer != OffloadTier::kNone && !(cluster.host_memory_gbps > 0))
    return missing("host_memory_gbps", cluster.host_memory_gbps, "the CPU optimizer step");
  const bool nvme = o.optimizer == OffloadTier::kNvme || o.params == OffloadTier::kNvme;
  if (nvme && !(cluster.nvme_gbps > 0))
    return missing("nvme_gbps", cluster.nvme_gbps, "NVMe offload");
  return std::nullopt;
}

}  // namespace vramplan
