// The cluster's links as the step-time model sees them: ring collectives, all-to-all and
// point-to-point transfers over NVLink within a node and the network across nodes.
#pragma once

#include <algorithm>
#include <cmath>

#include "vramplan/perf/step_time.h"

namespace vramplan {

// Bandwidth and latency of a group of `size` ranks `stride` apart (tensor-parallel ranks are
// adjacent, then context, data, pipeline: Megatron-LM's and nanotron's rank order).
struct Link {
  double bytes_per_s = 0;
  double latency_s = 0;
  bool crosses_nodes = false;
};

class Network {
 public:
  Network(const Cluster& cluster, const StepTimeConstants& c) : cluster_(cluster), c_(c) {}

  Link group(double size, double stride) const {
    const double per_node = static_cast<double>(cluster_.gpus_per_node);
    const double intra = cluster_.intra_node_gbps * 1e9 * c_.intra_bw_efficiency;
    if (size * stride <= per_node) return Link{intra, c_.intra_latency_s, false};
    // Rings across nodes leave each node through the NICs of the group's GPUs in that node.
    const double in_node = std::clamp(std::floor(per_node / stride), 1.0, size);
    const double inter = cluster_.inter_node_gbps * 1e9 * c_.inter_bw_efficiency * in_node;
    return Link{std::min(intra, inter), c_.inter_latency_s, true};
  }

  // All-gather or reduce-scatter of a tensor of `bytes` (gathered size) over a ring.
  double ring(double bytes, double size, double stride) const {
    if (size <= 1 || bytes <= 0) return 0;
    const Link link = group(size, stride);
    return c_.collective_overhead_s + (size - 1) * link.latency_s +
           (size - 1) / size * bytes / link.bytes_per_s;
  }
  double all_reduce(double bytes, double size, double stride) const {
    return 2 * ring(bytes, size, stride) - c_.collective_overhead_s * (size > 1 && bytes > 0);
  }

  // Each rank sends `bytes` spread evenly over the group; off-node traffic leaves through the
  // rank's own NIC while on-node traffic runs over NVLink at the same time. NCCL runs an
  // all-to-all as one group of sends and receives to every peer at once (torch's
  // all_to_all_single: ncclGroupStart, ncclSend/ncclRecv per peer, ncclGroupEnd), not as size − 1
  // steps one after another: one step's latency, where a ring collective pays one per step.
  double all_to_all(double bytes, double size, double stride) const {
    if (size <= 1 || bytes <= 0) return 0;
    const double in_node = ranks_in_node(size, stride);
    return exchange(bytes * (in_node - 1) / size, bytes * (size - in_node) / size, in_node < size);
  }

  // Ranks of a group of `size`, `stride` apart, that share a node.
  double ranks_in_node(double size, double stride) const {
    const double per_node = static_cast<double>(cluster_.gpus_per_node);
    return std::clamp(std::floor(per_node / stride), 1.0, size);
  }

  // One all-to-all-like exchange in which each rank sends `on_node` bytes over NVLink and
  // `off_node` bytes through its own NIC at the same time.
  double exchange(double on_node, double off_node, bool crosses_nodes) const {
    if (on_node <= 0 && off_node <= 0) return 0;
    const double intra = cluster_.intra_node_gbps * 1e9 * c_.intra_bw_efficiency;
    const double inter = cluster_.inter_node_gbps * 1e9 * c_.inter_bw_efficiency;
    const double latency = crosses_nodes ? c_.inter_latency_s : c_.intra_latency_s;
    return c_.collective_overhead_s + latency + std::max(on_node / intra, off_node / inter);
  }

  double p2p(double bytes, bool crosses_nodes) const {
    if (crosses_nodes)
      return c_.inter_p2p_latency_s +
             bytes / (cluster_.inter_node_gbps * 1e9 * c_.inter_bw_efficiency);
    return c_.collective_overhead_s + c_.intra_latency_s +
           bytes / (cluster_.intra_node_gbps * 1e9 * c_.intra_bw_efficiency);
  }

 private:
  Cluster cluster_;
  StepTimeConstants c_;
};

}  // namespace vramplan
