#include "vramplan/step_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "core/roofline_ops.h"
#include "core/step_time_split.h"
#include "core/validate.h"
#include "vramplan/params.h"

namespace vramplan {
namespace {

constexpr int kLayerKinds = 4;  // dense / MoE × full / sliding attention
// Gradients are reduced in buckets; the last one cannot overlap the backward pass. Megatron-LM's
// default bucket is 40M parameters (distributed_data_parallel_config.py bucket_size).
constexpr double kBucketElements = 40e6;

int kind_index(LayerKind k) { return (k.moe ? 2 : 0) + (k.sliding ? 1 : 0); }
LayerKind kind_of(int index) { return LayerKind{index >= 2, index % 2 == 1}; }

LayerKind kind_of_layer(const ModelConfig& m, size_t layer) {
  const bool moe = layer < m.moe_layers.size() && m.moe_layers[layer];
  const bool sliding =
      layer < m.layer_attention.size() && m.layer_attention[layer] == LayerAttention::kSliding;
  return LayerKind{moe, sliding};
}

double bytes_per_element(DType t) { return static_cast<double>(bits_of(t)) / 8.0; }

}  // namespace

// What evaluate() needs that does not change with the layout.
struct StepTimeData {
  double matmul_flops = 0;     // FLOP/s, peak, compute dtype
  double attention_flops = 0;  // FLOP/s, peak, attention_dtype()
  double vector_flops = 0;     // FLOP/s, peak, element-wise
  double hbm = 0;              // bytes/s, peak
  double mfu_peak = 0;         // FLOP/s, 16-bit peak MFU is measured against
  Cluster cluster;
  StepTimeConstants c;
  std::vector<std::array<int32_t, kLayerKinds>> prefix;  // layers of each kind before index i
  std::array<bool, kLayerKinds> present{};
  // Parameters of one layer of each kind: TP-sharded, replicated, routed experts.
  std::array<double, kLayerKinds> tp_params{}, replicated_params{}, expert_params{};
  double embedding_params = 0;   // TP-sharded, first stage
  double head_params = 0;        // TP-sharded, last stage (an embedding copy when tied and pp > 1)
  double tied_head_params = 0;   // the copy a tied model's last stage holds when pp > 1
  double last_stage_params = 0;  // final norm + MTP modules (replicated)
  double model_flops_per_sequence = 0;
  int64_t mtp_layers = 0;
  LayerKind mtp_kind;
};

namespace {

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
  // rank's own NIC while on-node traffic runs over NVLink at the same time.
  double all_to_all(double bytes, double size, double stride) const {
    if (size <= 1 || bytes <= 0) return 0;
    const double per_node = static_cast<double>(cluster_.gpus_per_node);
    const double in_node = std::clamp(std::floor(per_node / stride), 1.0, size);
    const double intra = cluster_.intra_node_gbps * 1e9 * c_.intra_bw_efficiency;
    const double inter = cluster_.inter_node_gbps * 1e9 * c_.inter_bw_efficiency;
    const double on_node = bytes * (in_node - 1) / size, off_node = bytes * (size - in_node) / size;
    const double latency = in_node < size ? c_.inter_latency_s : c_.intra_latency_s;
    return c_.collective_overhead_s + latency * (size - 1) +
           std::max(on_node / intra, off_node / inter);
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
    case OpKind::kGroupedMatmul:
      compute = flops / (data.matmul_flops * c.matmul_efficiency);
      break;
    case OpKind::kAttention:
      compute = flops / (data.attention_flops * c.attention_efficiency);
      break;
    case OpKind::kMemory:
      compute = flops / data.vector_flops;
      break;
  }
  return std::max(compute, memory) + kernels * c.kernel_overhead_s;
}

// Per microbatch, one layer (or the embedding, or the head) on one GPU.
struct SectionTime {
  double fwd = 0, bwd = 0;
  double attention_fwd = 0;  // what selective recomputation re-runs
  double tp_fwd = 0, tp_bwd = 0;
  double ep = 0, cp = 0;
  // Kernels and collectives the framework issues from the CPU, forward and backward.
  double launches_fwd = 0, launches_bwd = 0, attention_launches = 0;
  double total() const { return fwd + bwd + tp_fwd + tp_bwd + ep + cp; }
  void add(const SectionTime& o, double times) {
    launches_fwd += times * o.launches_fwd;
    launches_bwd += times * o.launches_bwd;
    attention_launches += times * o.attention_launches;
    fwd += times * o.fwd;
    bwd += times * o.bwd;
    attention_fwd += times * o.attention_fwd;
    tp_fwd += times * o.tp_fwd;
    tp_bwd += times * o.tp_bwd;
    ep += times * o.ep;
    cp += times * o.cp;
  }
};

void add_ops(const StepTimeData& data, const OpList& ops, SectionTime& t) {
  for (int i = 0; i < ops.count; ++i) {
    const OpCost& op = ops.ops[i];
    const double fwd = op_seconds(data, op, false);
    t.fwd += fwd;
    t.bwd += op_seconds(data, op, true);
    t.launches_fwd += op.kernels;
    t.launches_bwd += 2 * op.kernels;
    if (op.selective) {
      t.attention_fwd += fwd;
      t.attention_launches += op.kernels;
    }
  }
}

// Tensor-parallel collectives of one layer. Each TP block (attention, dense or shared-expert
// MLP) all-gathers its input and reduce-scatters its output with sequence parallelism, or
// all-reduces the output without it (the same ring time), forward and again backward.
void add_tp_comm(const Scenario& s, const OpDims& d, LayerKind kind, const Network& net,
                 SectionTime& t) {
  const double block = net.ring(d.tokens * s.model.hidden * d.act_bytes, d.tp, 1);
  double blocks = 1;  // attention
  if (!kind.moe || s.model.moe.shared_experts > 0) blocks += 1;
  t.tp_fwd += 2 * blocks * block;
  t.tp_bwd += 2 * blocks * block;
  if (d.tp > 1) {
    t.launches_fwd += 2 * blocks;
    t.launches_bwd += 2 * blocks;
  }
  if (kind.moe && d.etp > 1) {
    t.launches_fwd += 2;
    t.launches_bwd += 2;
    // Expert-TP ranks gather the tokens routed to them and scatter the results back.
    const double routed = d.tokens * s.model.moe.top_k * d.etp / d.tp_sp;
    const double gathered = net.ring(routed * s.model.hidden * d.act_bytes, d.etp, 1);
    t.tp_fwd += 2 * gathered;
    t.tp_bwd += 2 * gathered;
  }
}

// Expert-parallel all-to-all: dispatch and combine, forward and backward.
void add_ep_comm(const Scenario& s, const OpDims& d, const Network& net, SectionTime& t) {
  const double sent = d.tokens / d.tp_sp * s.model.moe.top_k * s.model.hidden * d.act_bytes;
  t.ep += 4 * net.all_to_all(sent, d.ep, d.etp);
  if (d.ep > 1) {
    t.launches_fwd += 2;
    t.launches_bwd += 2;
  }
}

// Context parallelism passes each rank's keys and values around a ring (and their gradients
// backward), hidden behind the attention blocks computing meanwhile.
void add_cp_comm(const Scenario& s, const OpDims& d, const Network& net, double attention_fwd,
                 SectionTime& t) {
  const double cp = static_cast<double>(s.parallel.cp);
  if (cp <= 1) return;
  const ModelConfig& m = s.model;
  const double kv_width =
      m.attention == AttentionKind::kMla
          ? m.num_heads * (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim)
          : 2.0 * m.num_kv_heads * m.head_dim;
  const double chunk = d.tokens * kv_width / d.tp * d.act_bytes;
  const Link link = net.group(cp, d.tp);
  const double step = link.latency_s + chunk / link.bytes_per_s;
  const double fwd = (cp - 1) * step, bwd = 2 * (cp - 1) * step;
  t.cp += std::max(0.0, fwd - attention_fwd) + std::max(0.0, bwd - 2.5 * attention_fwd);
  t.launches_fwd += cp - 1;
  t.launches_bwd += 2 * (cp - 1);
}

SectionTime layer_time(const StepTimeData& data, const Scenario& s, const OpDims& d, LayerKind kind,
                       const Network& net) {
  OpList ops;
  layer_ops(s, d, kind, ops);
  SectionTime t;
  add_ops(data, ops, t);
  add_tp_comm(s, d, kind, net, t);
  if (kind.moe) add_ep_comm(s, d, net, t);
  add_cp_comm(s, d, net, t.attention_fwd, t);
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

// One pipeline rank: its layers by kind, time per microbatch and parameters.
struct RankWork {
  std::array<double, kLayerKinds> layers{};
  double layer_count = 0;
  SectionTime time;
  double recompute = 0, recompute_launches = 0;
  double dense_params = 0, expert_params = 0;
  double gpu = 0;  // seconds per microbatch the GPU is busy (compute and exposed communication)
  double cpu = 0;  // seconds per microbatch the framework needs to issue the work
  double busy() const { return std::max(gpu, cpu); }
};

// HBM traffic of the optimizer update per local parameter: the gradient read, the fp32 master
// copy and each moment tensor read and written, the working weights written (and read).
double optimizer_bytes_per_param(const Training& tr) {
  double moments = 0, moment_bytes = bytes_per_element(tr.optimizer_state_dtype);
  switch (tr.optimizer) {
    case Optimizer::kAdamW:
      moments = 2;
      break;
    case Optimizer::kAdam8bit:
      moments = 2;
      moment_bytes = 1;
      break;
    case Optimizer::kSgdMomentum:
    case Optimizer::kLion:
    case Optimizer::kMuon:
      moments = 1;
      break;
    case Optimizer::kSgd:
    case Optimizer::kAdafactor:  // factored second moment: negligible traffic
      break;
  }
  const double grad = tr.fp32_grad_accumulation ? 4.0 : bytes_per_element(tr.grad_dtype);
  const double master = tr.master_weights ? 8.0 : 0.0;
  return grad + master + 2 * moments * moment_bytes + 2 * bytes_per_element(tr.param_dtype);
}

enum class Sharding { kNone, kOptimizer, kGradOp, kFull };

Sharding sharding_of(const Parallelism& p) {
  if (p.zero >= 3 || p.fsdp == FsdpMode::kFullShard || p.fsdp == FsdpMode::kHybridShard)
    return Sharding::kFull;
  if (p.fsdp == FsdpMode::kShardGradOp) return Sharding::kGradOp;
  if (p.zero >= 1 || p.distributed_optimizer) return Sharding::kOptimizer;
  return Sharding::kNone;
}

struct DpCost {
  double exposed = 0;
  double optimizer = 0;
};

// Data-parallel traffic for `params` parameters reduced over `size` ranks `stride` apart.
// Gradients reduced once per step hide behind the last microbatch's backward pass except for the
// last bucket; parameter gathers of sharded data parallelism hide behind the compute they precede
// except the first layer's.
double dp_exposed(const Scenario& s, const Network& net, double params, double size, double stride,
                  double microbatches, const RankWork& rank) {
  if (size <= 1 || params <= 0) return 0;
  const Parallelism& p = s.parallel;
  const double grad_bytes = params * bytes_per_element(s.training.reduce_dtype);
  const double param_bytes = params * bytes_per_element(s.training.param_dtype);
  const double backward = rank.time.bwd + rank.time.tp_bwd;
  auto overlapped = [](double comm, double window, double last_piece) {
    return std::max(comm - window, std::min(comm, last_piece));
  };
  const double bucket = std::min(1.0, kBucketElements / params);
  switch (sharding_of(p)) {
    case Sharding::kNone: {
      const double reduce = net.all_reduce(grad_bytes, size, stride);
      return overlapped(reduce, backward, reduce * bucket);
    }
    case Sharding::kOptimizer: {
      const double reduce = net.ring(grad_bytes, size, stride);
      return overlapped(reduce, backward, reduce * bucket) + net.ring(param_bytes, size, stride);
    }
    case Sharding::kGradOp:
    case Sharding::kFull: {
      const bool hybrid = p.fsdp == FsdpMode::kHybridShard && p.fsdp_shard_group > 0;
      const double group = hybrid ? std::min<double>(p.fsdp_shard_group, size) : size;
      const double gathers = sharding_of(p) == Sharding::kFull ? 2 : 1;
      const double per_microbatch =
          gathers * net.ring(param_bytes, group, stride) + net.ring(grad_bytes, group, stride);
      const double first_layer = per_microbatch / std::max(rank.layer_count, 1.0);
      double exposed = microbatches * overlapped(per_microbatch, rank.time.total(), first_layer);
      if (group < size) {  // hybrid: shards all-reduced across the replicas once per step
        const double across = net.all_reduce(grad_bytes / group, size / group, stride * group);
        exposed += overlapped(across, backward, across * bucket);
      }
      return exposed;
    }
  }
  return 0;
}

double sharded_over(const Parallelism& p, double group) {
  return sharding_of(p) == Sharding::kNone ? 1.0 : group;
}

}  // namespace

Result<StepTimeModel> StepTimeModel::prepare(const Scenario& base, const Gpu& gpu,
                                             const Cluster& cluster,
                                             const StepTimeConstants& constants) {
  const DType compute = matmul_dtype(base.training);
  if (gpu.peak_tflops(compute) <= 0)
    return Error{
        "gpu", gpu.id,
        "a GPU whose catalog entry gives a peak for the compute dtype, or another "
        "activation_dtype",
        fmt::format("{} lists no {} tensor-core peak ({}_tflops)", gpu.id, dtype_name(compute),
                    compute == DType::kFp32 ? "tf32" : dtype_name(compute))};
  if (gpu.hbm_gbps <= 0)
    return Error{"gpu", gpu.id, "a GPU whose catalog entry gives hbm_gbps",
                 "memory bandwidth unknown"};
  if (!(cluster.gpus_per_node >= 1))
    return Error{"gpus_per_node", std::to_string(cluster.gpus_per_node), "an integer >= 1", ""};
  if (!(cluster.intra_node_gbps > 0))
    return Error{"intra_node_gbps", fmt::format("{:g}", cluster.intra_node_gbps),
                 "a positive bandwidth in GB/s", "needed for collectives inside a node"};
  if (!(cluster.inter_node_gbps > 0))
    return Error{"inter_node_gbps", fmt::format("{:g}", cluster.inter_node_gbps),
                 "a positive bandwidth in GB/s", "needed for collectives across nodes"};
  if (auto e = validate_scenario(base)) return *e;

  auto data = std::make_shared<StepTimeData>();
  data->matmul_flops = gpu.peak_tflops(compute) * 1e12;
  const double attention_peak = gpu.peak_tflops(attention_dtype(compute));
  data->attention_flops = (attention_peak > 0 ? attention_peak : gpu.peak_tflops(compute)) * 1e12;
  data->vector_flops = (gpu.fp32_tflops > 0 ? gpu.fp32_tflops : gpu.peak_tflops(compute)) * 1e12;
  data->hbm = gpu.hbm_gbps * 1e9;
  const double peak16 = gpu.peak_tflops(compute == DType::kFp16 ? DType::kFp16 : DType::kBf16);
  data->mfu_peak = (peak16 > 0 ? peak16 : gpu.peak_tflops(DType::kFp16)) * 1e12;
  data->cluster = cluster;
  data->c = constants;

  const ModelConfig& m = base.model;
  const ParamCounts counts = count_parameters(m);
  data->prefix.assign(m.num_layers + 1, {});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const int k = kind_index(kind_of_layer(m, i));
    data->prefix[i + 1] = data->prefix[i];
    data->prefix[i + 1][k] += 1;
    if (data->present[k]) continue;
    data->present[k] = true;
    const LayerParams& lp = counts.layers[i];
    data->tp_params[k] = static_cast<double>(lp.attention + lp.mlp);
    data->replicated_params[k] =
        static_cast<double>(lp.attention_replicated + lp.norms + lp.router);
    data->expert_params[k] = static_cast<double>(lp.routed_experts);
  }
  data->embedding_params = static_cast<double>(counts.embedding + counts.position_embedding);
  data->head_params = static_cast<double>(counts.lm_head);
  data->tied_head_params = counts.lm_head == 0 ? static_cast<double>(counts.embedding) : 0;
  data->last_stage_params = static_cast<double>(counts.final_norm + counts.mtp_total);
  data->mtp_layers = m.mtp_layers;
  data->mtp_kind = LayerKind{m.is_moe(), false};

  // Model FLOPs per sequence, unsharded: 3 × forward (forward + backward), no recomputation.
  Scenario whole = base;
  whole.parallel = Parallelism{};
  whole.training.micro_batch = 1;
  const OpDims d = op_dims(whole);
  auto model_flops = [](const OpList& ops) {
    double sum = 0;
    for (int i = 0; i < ops.count; ++i) sum += 3 * ops.ops[i].model_flops;
    return sum;
  };
  for (int k = 0; k < kLayerKinds; ++k) {
    if (!data->present[k]) continue;
    OpList ops;
    layer_ops(whole, d, kind_of(k), ops);
    data->model_flops_per_sequence += data->prefix[m.num_layers][k] * model_flops(ops);
  }
  OpList head;
  head_ops(whole, d, head);
  data->model_flops_per_sequence += model_flops(head);
  for (int64_t i = 0; i < m.mtp_layers; ++i) {
    OpList mtp;
    layer_ops(whole, d, data->mtp_kind, mtp);
    mtp_extra_ops(whole, d, mtp);
    data->model_flops_per_sequence += model_flops(mtp);
  }
  return StepTimeModel(std::move(data));
}

namespace {

// Section times of one layout, computed once per evaluate().
struct LayoutTimes {
  std::array<SectionTime, kLayerKinds> per_kind{};
  SectionTime embedding, head;
};

// Recomputation re-runs forward passes: whole layers (up to recompute_layers of them per
// stage), or only the attention core.
// Share of a dense layer's matmul FLOPs that op-level selective checkpointing re-runs: the 2nd,
// 4th and 6th matmuls (wk, wo and, in a gated MLP, w3).
double op_level_recompute_share(const ModelConfig& m) {
  const double h = static_cast<double>(m.hidden), q = static_cast<double>(m.num_heads * m.head_dim);
  const double kv = static_cast<double>(m.num_kv_heads * m.head_dim);
  const double f = static_cast<double>(m.ffn);
  const bool gated = m.mlp == MlpKind::kGated;
  const double all = h * (q + 2 * kv) + q * h + (gated ? 3 : 2) * h * f;
  const double rerun = h * kv + q * h + h * f;  // wk, wo, and w3 (gated) or fc2 (plain)
  return all > 0 ? rerun / all : 0;
}

void add_recompute(const ModelConfig& m, const Training& tr, RankWork& rank) {
  if (tr.recompute == Recompute::kFull) {
    const double limit = static_cast<double>(tr.recompute_layers);
    const double share =
        (limit == 0 || rank.layer_count == 0) ? 1.0 : std::min(1.0, limit / rank.layer_count);
    rank.recompute = share * (rank.time.fwd + rank.time.tp_fwd + rank.time.ep / 2);
    rank.recompute_launches = share * rank.time.launches_fwd;
  } else if (tr.recompute == Recompute::kSelective) {
    rank.recompute = rank.time.attention_fwd;
    rank.recompute_launches = rank.time.attention_launches;
  } else if (tr.recompute == Recompute::kSelectiveOp) {
    // The unsaved matmuls (wk, wo, w3: their share of the layer's matmul FLOPs) and every
    // pointwise op are re-run; attention is not.
    rank.recompute = op_level_recompute_share(m) * (rank.time.fwd - rank.time.attention_fwd);
    rank.recompute_launches = rank.time.launches_fwd - rank.time.attention_launches;
  }
}

RankWork rank_work(const StepTimeData& data, const Scenario& s, const LayoutTimes& times,
                   const ChunkSplit& split, int64_t r) {
  const Parallelism& p = s.parallel;
  const double tp = static_cast<double>(p.tp), experts = static_cast<double>(p.ep * p.etp);
  RankWork rank;
  for (int64_t j = 0; j < p.vpp; ++j) {
    const int64_t c = r + j * p.pp;
    const int64_t begin = split.begin(c), end = begin + split.size(c);
    for (int k = 0; k < kLayerKinds; ++k)
      rank.layers[k] += data.prefix[end][k] - data.prefix[begin][k];
  }
  for (int k = 0; k < kLayerKinds; ++k) {
    rank.layer_count += rank.layers[k];
    rank.time.add(times.per_kind[k], rank.layers[k]);
    rank.dense_params += rank.layers[k] * (data.tp_params[k] / tp + data.replicated_params[k]);
    rank.expert_params += rank.layers[k] * data.expert_params[k] / experts;
  }
  add_recompute(s.model, s.training, rank);
  if (r == 0) {
    rank.time.add(times.embedding, 1);
    rank.dense_params += data.embedding_params / tp;
  }
  if (r == p.pp - 1) {
    rank.time.add(times.head, 1);
    rank.dense_params +=
        (data.head_params + (p.pp > 1 ? data.tied_head_params : 0)) / tp + data.last_stage_params;
  }
  // The CPU issues kernels ahead of the GPU; when it cannot keep up (small GEMMs after heavy
  // tensor parallelism, eager frameworks) the GPU waits for it.
  rank.gpu = rank.time.total() + rank.recompute;
  rank.cpu = (rank.time.launches_fwd + rank.time.launches_bwd + rank.recompute_launches) *
             data.c.cpu_overhead_s;
  return rank;
}

// Pipeline sends of activations forward and gradients backward, one pair per model chunk per
// microbatch, plus the fill and drain: (p−1)/v microbatch-stage times idle.
double pipeline_seconds(const StepTimeData& data, const Scenario& s, const OpDims& d,
                        const Network& net, double microbatches, double stage_seconds) {
  const Parallelism& p = s.parallel;
  if (p.pp <= 1) return 0;
  const double stride = static_cast<double>(p.tp * p.cp * p.dp);
  const bool crosses = stride * static_cast<double>(p.pp) > data.cluster.gpus_per_node;
  const double send = net.p2p(d.tokens * s.model.hidden * d.act_bytes / d.tp_sp, crosses);
  const double vpp = static_cast<double>(p.vpp);
  const double chunks = p.schedule == Schedule::kInterleaved ? vpp : 1.0;
  const double per_microbatch = stage_seconds + 2 * vpp * send;
  return microbatches * 2 * vpp * send + (static_cast<double>(p.pp) - 1) / chunks * per_microbatch;
}

}  // namespace

StepTime StepTimeModel::evaluate(const Scenario& s) const {
  const StepTimeData& data = *data_;
  const Parallelism& p = s.parallel;
  const Network net(data.cluster, data.c);
  const OpDims d = op_dims(s);

  LayoutTimes times;
  for (int k = 0; k < kLayerKinds; ++k)
    if (data.present[k]) times.per_kind[k] = layer_time(data, s, d, kind_of(k), net);
  times.embedding = embedding_time(data, s, d, net);
  times.head = head_time(data, s, d, net);

  const double microbatches = static_cast<double>(microbatches_of(s));
  const double tp = d.tp, cp = static_cast<double>(p.cp), dp = static_cast<double>(p.dp);
  const double dense_group = dp * cp, expert_group = tp * cp * dp / (d.etp * d.ep);
  const ChunkSplit split(s.model, p);

  RankWork slowest;
  double dp_worst = 0, optimizer_worst = 0;
  for (int64_t r = 0; r < p.pp; ++r) {
    const RankWork rank = rank_work(data, s, times, split, r);
    const double dp_time =
        dp_exposed(s, net, rank.dense_params, dense_group, tp, microbatches, rank) +
        dp_exposed(s, net, rank.expert_params, expert_group, d.etp * d.ep, microbatches, rank);
    const double local = rank.dense_params / sharded_over(p, dense_group) +
                         rank.expert_params / sharded_over(p, expert_group);
    const double optimizer =
        local * optimizer_bytes_per_param(s.training) / (data.hbm * data.c.hbm_efficiency) +
        data.c.kernel_overhead_s;
    dp_worst = std::max(dp_worst, dp_time);
    optimizer_worst = std::max(optimizer_worst, optimizer);
    if (r == 0 || rank.busy() > slowest.busy()) slowest = rank;
  }

  StepTime out;
  const SectionTime& t = slowest.time;
  out.compute_s = microbatches * (t.fwd + t.bwd);
  out.recompute_s = microbatches * slowest.recompute;
  out.tp_comm_s = microbatches * (t.tp_fwd + t.tp_bwd);
  out.cp_comm_s = microbatches * t.cp;
  out.ep_comm_s = microbatches * t.ep;
  out.cpu_bound_s = microbatches * (slowest.busy() - slowest.gpu);
  out.pp_bubble_s = pipeline_seconds(data, s, d, net, microbatches, slowest.busy());
  out.dp_comm_exposed_s = dp_worst;
  out.optimizer_s = optimizer_worst;
  out.step_time_s = out.compute_s + out.recompute_s + out.tp_comm_s + out.cp_comm_s +
                    out.ep_comm_s + out.cpu_bound_s + out.pp_bubble_s + out.dp_comm_exposed_s +
                    out.optimizer_s;
  const double world = static_cast<double>(p.world_size());
  const double sequences = microbatches * d.micro_batch * dp;
  out.tokens_per_s_per_gpu = sequences * d.seq / (out.step_time_s * world);
  out.mfu = sequences * data.model_flops_per_sequence / (out.step_time_s * data.mfu_peak * world);
  return out;
}

Result<StepTime> estimate_step_time(const Scenario& s, const Gpu& gpu, const Cluster& cluster,
                                    const StepTimeConstants& constants) {
  Result<StepTimeModel> model = StepTimeModel::prepare(s, gpu, cluster, constants);
  if (!model) return model.error();
  return model->evaluate(s);
}

Cluster default_cluster(const Gpu& gpu) {
  return Cluster{gpu.gpus_per_node, gpu.nvlink_gbps, gpu.inter_node_gbps};
}

}  // namespace vramplan
