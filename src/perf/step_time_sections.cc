#include "perf/step_time_sections.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "perf/moe_dispatch.h"

namespace vramplan {

// A grouped GEMM (the routed experts) runs each expert's rows in tiles of 128 (CUTLASS's grouped
// GEMM in torch._grouped_mm and Transformer Engine): an expert with fewer rows, or a remainder,
// still occupies a whole tile. Measured on an H100, 64 tokens per expert run at 0.10-0.17 of
// peak against 0.5-0.7 from 1,024 (reference/gpu_runs/h100-2026-11-27-shapes.jsonl).
double grouped_padding(const OpCost& op) {
  constexpr double kGroupTileRows = 128;
  if (!(op.gemm_m > 0)) return 1;
  return std::ceil(op.gemm_m / kGroupTileRows) * kGroupTileRows / op.gemm_m;
}

// Attention cannot finish before its longest query tile does: with fewer tiles (in units of the
// longest, roofline_ops.h) than SMs, the kernel takes the longest tile's time at one SM's share
// of the rate, not the total work at the whole GPU's.
double tile_occupancy_bound(const StepTimeData& data, const OpCost& op) {
  if (!(data.sm_count > 0) || !(op.attention_tiles > 0)) return 1;
  return std::max(1.0, data.sm_count / op.attention_tiles);
}

namespace {

// The expert all-to-all (dispatch, combine) and the expert-TP gather and scatter: collectives
// issued per pass each.
constexpr double kRoutedCollectivesPerPass = 2;

// Seconds of one pass of one operation: the slower of compute and memory traffic, plus a fixed
// cost per kernel.
double op_seconds(const StepTimeData& data, const OpCost& op, bool backward) {
  const StepTimeConstants& c = data.c;
  const double flops = backward ? op.bwd_flops : op.fwd_flops;
  const double bytes = backward ? op.bwd_bytes : op.fwd_bytes;
  const double kernels = backward ? 2 * op.kernels : op.kernels;
  const double memory = bytes / (data.hbm * c.hbm_efficiency);
  double compute = 0;
  switch (op.kind) {
    case OpKind::kMatmul:
      compute = flops / (data.matmul_flops * c.matmul_efficiency);
      break;
    case OpKind::kGroupedMatmul:
      compute = flops * grouped_padding(op) / (data.matmul_flops * c.matmul_efficiency);
      break;
    case OpKind::kAttention:
      compute = flops / (data.attention_flops * c.attention_efficiency * op.attention_scale) *
                tile_occupancy_bound(data, op);
      break;
    case OpKind::kMemory:
      compute = flops / data.vector_flops;
      break;
  }
  return std::max(compute, memory) + kernels * c.kernel_overhead_s;
}

// The section's operations, one op_seconds each way. Returns the seconds of its TP-sharded GEMMs
// (not the routed experts' grouped ones), forward and backward: what overlapped TP
// communication can hide behind.
std::pair<double, double> add_ops(const StepTimeData& data, const OpList& ops, SectionTime& t) {
  double gemm_fwd = 0, gemm_bwd = 0;
  for (int i = 0; i < ops.count; ++i) {
    const OpCost& op = ops.ops[i];
    const double fwd = op_seconds(data, op, false), bwd = op_seconds(data, op, true);
    t.fwd += fwd;
    t.bwd += bwd;
    t.launches_fwd += op.kernels;
    t.launches_bwd += 2 * op.kernels;
    if (op.selective) {
      t.attention_fwd += fwd;
      t.attention_launches += op.kernels;
    }
    if (op.kind == OpKind::kMatmul) {
      gemm_fwd += fwd;
      gemm_bwd += bwd;
    }
  }
  return {gemm_fwd, gemm_bwd};
}

// Tensor-parallel collectives of one layer. Each TP block (attention, dense or shared-expert
// MLP) all-gathers its input and reduce-scatters its output with sequence parallelism, or
// all-reduces the output without it (the same ring time), forward and again backward. With
// tp_comm_overlap (Transformer Engine userbuffers, torchtitan async TP) each collective is cut
// into chunks that run beside the partial GEMMs it feeds or drains: only what outlasts the
// layer's TP GEMMs stays exposed.
void add_tp_comm(const Scenario& s, const OpDims& d, LayerKind kind, const Network& net,
                 std::pair<double, double> gemms, SectionTime& t) {
  const double block = net.ring(d.tokens * s.model.hidden * d.act_bytes, d.tp, 1);
  double blocks = 1;  // attention
  if (!kind.moe || s.model.moe.shared_experts > 0) blocks += 1;
  const bool overlap = s.conventions.tp_comm_overlap && d.tp > 1;
  const double comm = 2 * blocks * block;
  t.tp_fwd += overlap ? std::max(0.0, comm - gemms.first) : comm;
  t.tp_bwd += overlap ? std::max(0.0, comm - gemms.second) : comm;
  if (d.tp > 1) {
    t.launches_fwd += 2 * blocks;
    t.launches_bwd += 2 * blocks;
  }
  if (kind.moe && d.etp > 1) {
    t.launches_fwd += kRoutedCollectivesPerPass;
    t.launches_bwd += kRoutedCollectivesPerPass;
    // Expert-TP ranks gather the tokens routed to them and scatter the results back.
    const double routed = d.tokens * s.model.moe.top_k * d.etp / d.tp_sp;
    const double gathered = net.ring(routed * s.model.hidden * d.act_bytes, d.etp, 1);
    t.tp_fwd += 2 * gathered;
    t.tp_bwd += 2 * gathered;
  }
}

// Expert-parallel dispatch and combine, forward and backward, as the token dispatcher sends them
// (perf/moe_dispatch.h). With ep_comm_overlap
// (Megatron's combined 1F1B, megatron/core/pipeline_parallel/combined_1f1b.py) a layer's forward
// of one microbatch runs beside its backward of another: the forward's two all-to-alls hide
// behind the backward's compute, the backward's behind the forward's, only what outlasts that
// compute stays exposed. A microbatch without a partner pays them in full (ep_unpaired).
void add_ep_comm(const Scenario& s, const OpDims& d, const Network& net, SectionTime& t) {
  const double pass =
      2 * dispatch_seconds(s.conventions.moe_dispatcher, s.model.moe, d.tokens / d.tp_sp,
                           s.model.hidden * d.act_bytes, d.ep, d.etp, net);
  if (s.conventions.ep_comm_overlap && d.ep > 1) {
    const double exposed = std::max(0.0, pass - t.bwd) + std::max(0.0, pass - t.fwd);
    t.ep += exposed;
    t.ep_unpaired += 2 * pass - exposed;
  } else {
    t.ep += 2 * pass;
  }
  if (d.ep > 1) {
    t.launches_fwd += kRoutedCollectivesPerPass;
    t.launches_bwd += kRoutedCollectivesPerPass;
  }
}

// Per-layer CUDA graphs (--cuda-graphs: Megatron --cuda-graph-impl transformer_engine|local,
// Transformer Engine's make_graphed_callables in transformer_engine/pytorch/graph.py): the
// layer's kernels and collectives replay from a captured graph, one launch per graph and pass,
// instead of being issued one by one. What has no fixed shape stays eager: under dropless routing
// the routed experts (permutation, grouped GEMMs, activation), their all-to-all and the expert-TP
// gathers are sized by the router at run time (Megatron's capturable MoE scopes, moe_router and
// moe_preprocess, stop before the dispatch). A layer with such a part is two graphs, before and
// after it.
void replay_from_graphs(const OpList& ops, LayerKind kind, const OpDims& d, SectionTime& t) {
  double eager = 0;
  for (int i = 0; i < ops.count; ++i)
    if (ops.ops[i].dynamic_shape) eager += ops.ops[i].kernels;
  double collectives = 0;
  if (kind.moe && d.ep > 1) collectives += kRoutedCollectivesPerPass;
  if (kind.moe && d.etp > 1) collectives += kRoutedCollectivesPerPass;
  const double graphs = eager + collectives > 0 ? 2 : 1;
  t.launches_fwd = graphs + eager + collectives;
  t.launches_bwd = graphs + 2 * eager + collectives;
  // Selective recomputation re-runs the attention inside the captured graph.
  t.attention_launches = std::min(t.attention_launches, 1.0);
}

// Context parallelism as Megatron-LM runs it by default (--cp-comm-type p2p: Transformer
// Engine's AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/attention/dot_product_attention/
// context_parallel.py): the sequence is cut into 2·cp chunks and rank i holds chunks i and
// 2cp−1−i, so that under the causal mask each of the cp steps does the same work, 1/cp of the
// layer's attention. At each step a rank computes its queries against one rank's keys and values
// while it sends them on around the ring and receives the next (a second stream): the transfer of
// step k+1 hides behind step k's attention, the last step has nothing left to hide. Backward
// passes the keys and values and the dK/dV accumulated so far: twice the bytes, behind the
// attention backward (2.5× the forward FLOPs). Every step after the first adds its own attention
// kernel and the correction of the output and log-sum-exp (forward) or of dQ/dK/dV (backward).
void add_cp_comm(const StepTimeData& data, const Scenario& s, const OpDims& d, const Network& net,
                 double attention_fwd, SectionTime& t) {
  const double cp = static_cast<double>(s.parallel.cp);
  if (cp <= 1) return;
  const ModelConfig& m = s.model;
  const double kv_width =
      m.attention == AttentionKind::kMla
          ? m.num_heads * (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim)
          : 2.0 * m.num_kv_heads * m.head_dim;
  const double chunk = d.tokens * kv_width / d.tp * d.act_bytes;
  const Link link = net.group(cp, d.tp);
  const double handshake = data.c.collective_overhead_s + link.latency_s;
  const double step_fwd = handshake + chunk / link.bytes_per_s;
  const double step_bwd = handshake + 2 * chunk / link.bytes_per_s;
  const double steps = cp - 1;
  const double kernels = 2 * steps * data.c.kernel_overhead_s;  // per pass
  t.cp += steps * std::max(0.0, step_fwd - attention_fwd / cp) + kernels;
  t.cp += steps * std::max(0.0, step_bwd - 2.5 * attention_fwd / cp) + kernels;
  t.launches_fwd += 3 * steps;  // attention, correction, send/receive
  t.launches_bwd += 3 * steps;
}

}  // namespace

SectionTime layer_time(const StepTimeData& data, const Scenario& s, const OpDims& d, LayerKind kind,
                       const Network& net) {
  OpList ops;
  layer_ops(s, d, kind, ops);
  SectionTime t;
  const std::pair<double, double> tp_gemms = add_ops(data, ops, t);
  add_tp_comm(s, d, kind, net, tp_gemms, t);
  if (kind.moe) add_ep_comm(s, d, net, t);
  add_cp_comm(data, s, d, net, t.attention_fwd, t);
  if (s.overheads.per_layer_cuda_graphs) replay_from_graphs(ops, kind, d, t);
  return t;
}

SectionTime embedding_time(const StepTimeData& data, const Scenario& s, const OpDims& d,
                           const Network& net) {
  OpList ops;
  embedding_ops(s, d, ops);
  SectionTime t;
  add_ops(data, ops, t);
  // The vocabulary-parallel lookup is summed over TP ranks (a reduce-scatter with SP).
  t.tp_fwd += net.ring(d.tokens * s.model.hidden * d.act_bytes, d.tp, 1);
  t.tp_bwd += net.ring(d.tokens * s.model.hidden * d.act_bytes, d.tp, 1);
  if (d.tp > 1) {
    t.launches_fwd += 1;
    t.launches_bwd += 1;
  }
  return t;
}

SectionTime head_time(const StepTimeData& data, const Scenario& s, const OpDims& d,
                      const Network& net) {
  OpList ops;
  head_ops(s, d, ops);
  SectionTime t;
  add_ops(data, ops, t);
  // The LM head gathers the sequence-parallel input and scatters its gradient; the
  // vocabulary-parallel loss all-reduces a max and a sum per token.
  const double hidden = d.tokens * s.model.hidden * d.act_bytes;
  t.tp_fwd += net.ring(hidden, d.tp, 1) + 2 * net.all_reduce(d.tokens * 4, d.tp, 1);
  t.tp_bwd += net.ring(hidden, d.tp, 1);
  if (d.tp > 1) {
    t.launches_fwd += 3;
    t.launches_bwd += 1;
  }
  for (int64_t i = 0; i < data.mtp_layers; ++i) {
    OpList extra;
    mtp_extra_ops(s, d, extra);
    add_ops(data, extra, t);
    t.add(layer_time(data, s, d, data.mtp_kind, net), 1);
  }
  return t;
}

}  // namespace vramplan
