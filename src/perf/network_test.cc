#include "perf/network.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

// Eight H100s per node: 450 GB/s NVLink, 50 GB/s of network per GPU.
Network h100_nodes() { return Network(Cluster{8, 450, 50}, StepTimeConstants{}); }

TEST(Network, AllToAllPaysOneLatencyWhateverTheGroup) {
  // NCCL sends to every peer at once: one step's latency, not one per peer as a ring pays.
  const StepTimeConstants c;
  const Network net = h100_nodes();
  const double tiny = 8;  // bytes: latency-bound
  EXPECT_NEAR(net.all_to_all(tiny, 16, 1), net.all_to_all(tiny, 64, 1), 1e-9);
  EXPECT_NEAR(net.all_to_all(tiny, 16, 1), c.collective_overhead_s + c.inter_latency_s, 1e-9);
  EXPECT_NEAR(net.all_to_all(tiny, 8, 1), c.collective_overhead_s + c.intra_latency_s, 1e-9);
  EXPECT_GT(net.ring(tiny, 16, 1), net.all_to_all(tiny, 16, 1));
}

TEST(Network, AllToAllBandwidthIsTheOffNodeShareOverTheNic) {
  const StepTimeConstants c;
  const Network net = h100_nodes();
  const double bytes = 1e9;
  // 16 ranks over two nodes: half of what a rank sends leaves its node, through its own NIC.
  const double off_node = bytes * 8 / 16 / (50e9 * c.inter_bw_efficiency);
  EXPECT_NEAR(net.all_to_all(bytes, 16, 1), c.collective_overhead_s + c.inter_latency_s + off_node,
              1e-9);
  EXPECT_EQ(net.all_to_all(bytes, 1, 1), 0);
}

}  // namespace
}  // namespace vramplan
