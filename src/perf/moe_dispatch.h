// What one MoE dispatch (or its combine, the same traffic back) sends over the links, by token
// dispatcher: how many copies of a token leave its rank, and how many cross nodes.
#pragma once

#include <cstdint>

#include "perf/network.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// The chance that a token's experts include at least one of `experts_in_set` experts (a rank's
// or a node's), its top_k picked evenly among `experts`; with group-limited routing, picked
// from group_top_k of `groups` equal groups. Routing is taken as balanced (each expert equally
// likely), which is what Megatron-Bridge's performance runs force
// (moe_router_force_load_balancing).
double share_of_tokens_reaching(int64_t experts, int64_t top_k, double experts_in_set,
                                int64_t groups, int64_t group_top_k);

// Copies of each token one rank sends per dispatch, split by link.
struct DispatchCopies {
  double on_node = 0;   // to ranks in the same node (NVLink)
  double off_node = 0;  // across nodes (the rank's own NIC)
};

// `ep` expert-parallel ranks, `in_node` of them per node; the model's routing from `moe`.
DispatchCopies dispatch_copies(MoeDispatcher dispatcher, const MoeConfig& moe, double ep,
                               double in_node);

// Seconds of one dispatch of `tokens` tokens of `token_bytes` each over `ep` ranks `stride`
// apart (expert-TP ranks are adjacent).
double dispatch_seconds(MoeDispatcher dispatcher, const MoeConfig& moe, double tokens,
                        double token_bytes, double ep, double stride, const Network& net);

}  // namespace vramplan
