#include "perf/moe_dispatch.h"

#include <algorithm>
#include <cmath>

namespace vramplan {
namespace {

// The chance that k experts picked without replacement among n miss a set of m of them.
double misses(double n, double m, int64_t k) {
  double p = 1;
  for (int64_t i = 0; i < k; ++i) {
    const double left = n - m - static_cast<double>(i);
    if (left <= 0) return 0;
    p *= left / (n - static_cast<double>(i));
  }
  return p;
}

// The chance that `draws` of `population` items picked without replacement hold exactly `hits`
// of the `marked` ones (hypergeometric).
double exactly(int64_t population, int64_t marked, int64_t draws, int64_t hits) {
  if (hits > marked || draws - hits > population - marked || hits < 0) return 0;
  const auto log_choose = [](int64_t n, int64_t r) {
    return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(r) + 1) -
           std::lgamma(static_cast<double>(n - r) + 1);
  };
  return std::exp(log_choose(marked, hits) + log_choose(population - marked, draws - hits) -
                  log_choose(population, draws));
}

}  // namespace

double share_of_tokens_reaching(int64_t experts, int64_t top_k, double experts_in_set,
                                int64_t groups, int64_t group_top_k) {
  if (experts <= 0 || top_k <= 0 || experts_in_set <= 0) return 0;
  if (experts_in_set >= static_cast<double>(experts)) return 1;
  const auto e = static_cast<double>(experts);
  if (groups <= 1 || group_top_k >= groups) return 1 - misses(e, experts_in_set, top_k);
  // Group-limited: group_top_k groups are chosen (evenly), then top_k experts among theirs.
  const double per_group = e / static_cast<double>(groups);
  const double chosen = per_group * static_cast<double>(group_top_k);
  if (experts_in_set < per_group) {
    // A set inside one group is reached only when its group is chosen.
    const double group_chosen = static_cast<double>(group_top_k) / static_cast<double>(groups);
    return group_chosen * (1 - misses(chosen, experts_in_set, top_k));
  }
  // A set of whole groups (a node's experts): sum over how many of its groups are chosen.
  const auto whole = static_cast<int64_t>(std::floor(experts_in_set / per_group));
  double reached = 0;
  for (int64_t j = 1; j <= std::min(whole, group_top_k); ++j) {
    reached += exactly(groups, whole, group_top_k, j) *
               (1 - misses(chosen, per_group * static_cast<double>(j), top_k));
  }
  return reached;
}

DispatchCopies dispatch_copies(MoeDispatcher dispatcher, const MoeConfig& moe, double ep,
                               double in_node) {
  DispatchCopies c;
  if (ep <= 1 || moe.num_experts <= 0 || moe.top_k <= 0) return c;
  in_node = std::clamp(in_node, 1.0, ep);
  const double nodes = ep / in_node;
  const auto k = static_cast<double>(moe.top_k);
  switch (dispatcher) {
    case MoeDispatcher::kAllToAll:
      // One copy per chosen expert, wherever it lives (Megatron's MoEAlltoAllTokenDispatcher
      // permutes the top_k copies, then all_to_all_single by rank).
      c.on_node = k * (in_node - 1) / ep;
      c.off_node = k * (ep - in_node) / ep;
      break;
    case MoeDispatcher::kAllGather:
      // Every rank's tokens to every rank (MoEAllGatherTokenDispatcher), routed or not.
      c.on_node = in_node - 1;
      c.off_node = ep - in_node;
      break;
    case MoeDispatcher::kDeepEp:
    case MoeDispatcher::kHybridEp: {
      // One copy per destination rank within the node; across nodes one copy per destination
      // node over RDMA, which the receiving GPU forwards over NVLink to the node's other
      // destination ranks (DeepEP's internode dispatch; HybridEP's the same way).
      const double experts_per_rank = static_cast<double>(moe.num_experts) / ep;
      const double rank = share_of_tokens_reaching(moe.num_experts, moe.top_k, experts_per_rank,
                                                   moe.router_groups, moe.router_group_top_k);
      const double node =
          share_of_tokens_reaching(moe.num_experts, moe.top_k, experts_per_rank * in_node,
                                   moe.router_groups, moe.router_group_top_k);
      c.on_node = (in_node - 1) * rank * nodes;
      c.off_node = (nodes - 1) * node;
      break;
    }
  }
  return c;
}

double dispatch_seconds(MoeDispatcher dispatcher, const MoeConfig& moe, double tokens,
                        double token_bytes, double ep, double stride, const Network& net) {
  if (ep <= 1 || tokens <= 0 || token_bytes <= 0) return 0;
  // The all-gather dispatcher runs a ring all-gather (and its combine a reduce-scatter).
  if (dispatcher == MoeDispatcher::kAllGather)
    return net.ring(tokens * token_bytes * ep, ep, stride);
  const double in_node = net.ranks_in_node(ep, stride);
  const DispatchCopies c = dispatch_copies(dispatcher, moe, ep, in_node);
  return net.exchange(c.on_node * tokens * token_bytes, c.off_node * tokens * token_bytes,
                      in_node < ep);
}

}  // namespace vramplan
