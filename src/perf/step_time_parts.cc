#include "perf/step_time_parts.h"

#include <algorithm>
#include <cmath>

namespace vramplan {
namespace {

// Pipeline sends of activations forward and gradients backward, one pair per model chunk per
// microbatch, plus the fill and drain: (p−1)/v microbatch-stage times idle, each chunk-step of
// the fill and drain waiting for its send. 1F1B sends and receives between a microbatch's
// forward and backward passes (schedules.py forward_backward_pipelining_without_interleaving:
// send_forward_recv_backward, blocking). The interleaved schedule posts the next chunk's receive
// and its own send and computes meanwhile (schedules.py
// forward_backward_pipelining_with_interleaving, overlap_p2p_comm, Megatron-LM's default): in the
// steady state a send costs what outlasts the chunk's compute plus the wait on its handle.
double pipeline_seconds(const StepTimeData& data, const Scenario& s, const OpDims& d,
                        const Network& net, double microbatches, double stage_seconds) {
  const Parallelism& p = s.parallel;
  if (p.pp <= 1) return 0;
  const double stride = static_cast<double>(p.tp * p.cp * p.dp);
  const bool crosses = stride * static_cast<double>(p.pp) > data.cluster.gpus_per_node;
  const double send = net.p2p(d.tokens * s.model.hidden * d.act_bytes / d.tp_sp, crosses);
  const double vpp = static_cast<double>(p.vpp);
  const bool interleaved = p.schedule == Schedule::kInterleaved;
  const double chunks = interleaved ? vpp : 1.0;
  const double fill = (static_cast<double>(p.pp) - 1) / chunks * (stage_seconds + 2 * vpp * send);
  // Each of the 2·v sends of a microbatch runs beside one chunk's forward or backward; its
  // transfer hides, but the chunk still waits on the receive's handle before it starts (the
  // schedule's wait() on recv_prev/recv_next): a collective's fixed cost per send stays exposed,
  // so many virtual stages are not free.
  const double steady =
      interleaved ? data.c.collective_overhead_s + std::max(0.0, send - stage_seconds / (2 * vpp))
                  : send;
  return microbatches * 2 * vpp * steady + fill;
}

}  // namespace

LayoutTimes layout_times(const StepTimeData& data, const Scenario& s) {
  const Network net(data.cluster, data.c);
  const OpDims d = op_dims(s);
  LayoutTimes times;
  for (int k = 0; k < kLayerKinds; ++k)
    if (data.present[k]) times.per_kind[k] = layer_time(data, s, d, kind_of(k), net);
  times.embedding = embedding_time(data, s, d, net);
  times.head = head_time(data, s, d, net);
  return times;
}

// Microbatches whose expert all-to-all has no partner under combined 1F1B (ep_comm_overlap): the
// first forward and the last backward without pipelining; a pipeline's warm-up forwards and
// cool-down backwards (pp − 1 each on its first rank) besides, in all at most every microbatch.
double unpaired_microbatches(const Scenario& s, double microbatches) {
  return std::min(microbatches, static_cast<double>(s.parallel.pp));
}

double first_parts_seconds(const Scenario& s, double microbatches, const RankWork& slowest,
                           StepTime& out) {
  const SectionTime& t = slowest.time;
  out.compute_s = microbatches * (t.fwd + t.bwd);
  out.recompute_s = microbatches * slowest.recompute;
  out.tp_comm_s = microbatches * (t.tp_fwd + t.tp_bwd);
  out.cp_comm_s = microbatches * t.cp;
  out.ep_comm_s = microbatches * t.ep + unpaired_microbatches(s, microbatches) * t.ep_unpaired;
  out.cpu_bound_s = microbatches * (slowest.busy() - slowest.gpu);
  return out.compute_s + out.recompute_s + out.tp_comm_s + out.cp_comm_s + out.ep_comm_s +
         out.cpu_bound_s;
}

double tokens_per_gpu(const Scenario& s, const OpDims& d, double microbatches,
                      double step_seconds) {
  const Parallelism& p = s.parallel;
  const double world = static_cast<double>(p.world_size());
  const double sequences = microbatches * d.micro_batch * static_cast<double>(p.dp);
  return sequences * d.seq / (step_seconds * world);
}

StepTime step_time_of(const StepTimeData& data, const Scenario& s, const OpDims& d,
                      double microbatches, const RankWork& slowest, const RankTerms& terms) {
  const Parallelism& p = s.parallel;
  const Network net(data.cluster, data.c);
  StepTime out;
  const double first = first_parts_seconds(s, microbatches, slowest, out);
  out.pp_bubble_s = pipeline_seconds(data, s, d, net, microbatches, slowest.busy());
  out.dp_comm_exposed_s = terms.dp_exposed;
  out.optimizer_s = terms.optimizer;
  out.offload_s = terms.offload;
  // The same sum, left to right, as all ten parts written out.
  out.step_time_s =
      first + out.pp_bubble_s + out.dp_comm_exposed_s + out.optimizer_s + out.offload_s;
  out.tokens_per_s_per_gpu = tokens_per_gpu(s, d, microbatches, out.step_time_s);
  const double world = static_cast<double>(p.world_size());
  const double sequences = microbatches * d.micro_batch * static_cast<double>(p.dp);
  out.mfu = sequences * data.model_flops_per_sequence / (out.step_time_s * data.mfu_peak * world);
  return out;
}

bool later_parts_bounded(const StepTimeData& data) {
  const StepTimeConstants& c = data.c;
  const Cluster& cl = data.cluster;
  auto non_negative = [](double v) { return std::isfinite(v) && v >= 0; };
  auto rate = [](double v) { return std::isfinite(v) && v >= 1; };  // bytes per second
  return non_negative(c.collective_overhead_s) && non_negative(c.intra_latency_s) &&
         non_negative(c.inter_latency_s) && non_negative(c.inter_p2p_latency_s) &&
         non_negative(c.kernel_overhead_s) && non_negative(c.intra_bw_efficiency) &&
         non_negative(c.inter_bw_efficiency) && non_negative(c.hbm_efficiency) &&
         non_negative(c.optimizer_hbm_efficiency) && cl.gpus_per_node >= 1 &&
         rate(cl.intra_node_gbps * 1e9 * c.intra_bw_efficiency) &&
         rate(cl.inter_node_gbps * 1e9 * c.inter_bw_efficiency) &&
         rate(data.hbm * c.hbm_efficiency);
}

}  // namespace vramplan
