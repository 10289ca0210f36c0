#include "vramplan/perf/step_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "perf/roofline_ops.h"
#include "perf/step_time_offload.h"
#include "perf/step_time_sections.h"
#include "training/activations.h"
#include "training/chunk_split.h"
#include "training/scenario_checks.h"
#include "vramplan/model/params.h"

namespace vramplan {
namespace {

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

// The optimizer's states per parameter: the fp32 master copy and each moment tensor.
double optimizer_state_bytes_per_param(const Training& tr) {
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
  return (tr.master_weights ? 4.0 : 0.0) + moments * moment_bytes;
}

// HBM traffic of the optimizer update per local parameter: the gradient read, the fp32 master
// copy and each moment tensor read and written, the working weights written (and read).
double optimizer_bytes_per_param(const Training& tr) {
  const double grad = tr.fp32_grad_accumulation ? 4.0 : bytes_per_element(tr.grad_dtype);
  return grad + 2 * optimizer_state_bytes_per_param(tr) + 2 * bytes_per_element(tr.param_dtype);
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
// last bucket; parameter gathers and gradient reduce-scatters of sharded data parallelism run per
// unit (layer), each hidden behind the previous unit's compute except the first.
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
      // Per unit (a layer: FSDP2 fully_shard per block in torchtitan, Megatron-FSDP's
      // fsdp_unit_modules): each unit gathers its own parameters (again before the backward
      // pass when resharded after forward) and reduce-scatters its own gradients, so every
      // unit pays a collective's fixed cost and latency. A unit's collectives are prefetched
      // behind the previous unit's compute; the first unit's cannot be.
      const double units = std::max(rank.layer_count, 1.0);
      const double unit_comm = gathers * net.ring(param_bytes / units, group, stride) +
                               net.ring(grad_bytes / units, group, stride);
      const double unit_compute = rank.time.total() / units;
      double exposed =
          microbatches * (unit_comm + (units - 1) * std::max(0.0, unit_comm - unit_compute));
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
  if (auto e = offload_bandwidth_error(base, cluster)) return *e;

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

// The layers of each kind pipeline rank r holds over its vpp chunks.
std::array<double, kLayerKinds> rank_layers(const StepTimeData& data, const Parallelism& p,
                                            const ChunkSplit& split, int64_t r) {
  std::array<double, kLayerKinds> layers{};
  for (int64_t j = 0; j < p.vpp; ++j) {
    const int64_t c = r + j * p.pp;
    const int64_t begin = split.begin(c), end = begin + split.size(c);
    for (int k = 0; k < kLayerKinds; ++k) layers[k] += data.prefix[end][k] - data.prefix[begin][k];
  }
  return layers;
}

RankWork rank_work(const StepTimeData& data, const Scenario& s, const LayoutTimes& times,
                   const std::array<double, kLayerKinds>& layers, int64_t r) {
  const Parallelism& p = s.parallel;
  const double tp = static_cast<double>(p.tp), experts = static_cast<double>(p.ep * p.etp);
  RankWork rank;
  rank.layers = layers;
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

// What offloading adds on pipeline rank `rank` (perf/step_time_offload.h), whose optimizer
// steps `local` parameters.
OffloadTime rank_offload(const StepTimeData& data, const Scenario& s, const RankWork& rank,
                         double local, double microbatches) {
  if (!s.offload.any()) return {};
  OffloadRank o;
  o.optimizer_params = local;
  o.held_params = local;  // parameters are offloaded only where they are sharded like the states
  o.forward_s = rank.time.fwd + rank.time.tp_fwd + rank.time.ep / 2;
  o.backward_s =
      rank.time.bwd + rank.time.tp_bwd + rank.time.ep / 2 + rank.time.cp + rank.recompute;
  o.state_bytes_per_param = optimizer_state_bytes_per_param(s.training);
  if (s.offload.activations) {
    // A fully recomputed layer keeps its input, whatever its kind.
    const bool full = s.training.recompute == Recompute::kFull;
    const double dense = static_cast<double>(full ? recomputed_layer_input(s, false).bytes
                                                  : layer_activations(s, false, false).bytes);
    const double moe = full ? dense : static_cast<double>(layer_activations(s, true, false).bytes);
    for (int k = 0; k < kLayerKinds; ++k)
      o.activation_bytes += rank.layers[k] * (kind_of(k).moe ? moe : dense);
  }
  return offload_time(s, data.cluster, data.c, o, microbatches);
}

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

StepTime evaluate_with(const StepTimeData& data, const Scenario& s, const LayoutTimes& times) {
  const Parallelism& p = s.parallel;
  const Network net(data.cluster, data.c);
  const OpDims d = op_dims(s);

  const double microbatches = static_cast<double>(microbatches_of(s));
  const double tp = d.tp, cp = static_cast<double>(p.cp), dp = static_cast<double>(p.dp);
  const double dense_group = dp * cp, expert_group = tp * cp * dp / (d.etp * d.ep);
  const ChunkSplit split(s.model, p);

  RankWork slowest;
  double dp_worst = 0, optimizer_worst = 0, offload_worst = 0;
  // A middle rank (neither embedding nor head) is timed by its layers alone: one holding the
  // same layers as the middle rank before it gives the same figures, which cannot change the
  // maxima below, and is skipped.
  std::array<double, kLayerKinds> previous_middle{};
  bool have_middle = false;
  for (int64_t r = 0; r < p.pp; ++r) {
    const std::array<double, kLayerKinds> layers = rank_layers(data, p, split, r);
    if (r > 0 && r < p.pp - 1) {
      if (have_middle && layers == previous_middle) continue;
      previous_middle = layers;
      have_middle = true;
    }
    const RankWork rank = rank_work(data, s, times, layers, r);
    const double dp_time =
        dp_exposed(s, net, rank.dense_params, dense_group, tp, microbatches, rank) +
        dp_exposed(s, net, rank.expert_params, expert_group, d.etp * d.ep, microbatches, rank);
    const double local = rank.dense_params / sharded_over(p, dense_group) +
                         rank.expert_params / sharded_over(p, expert_group);
    const OffloadTime offload = rank_offload(data, s, rank, local, microbatches);
    const double optimizer = offload.gpu_optimizer_share * local *
                                 optimizer_bytes_per_param(s.training) /
                                 (data.hbm * data.c.hbm_efficiency) +
                             data.c.kernel_overhead_s;
    offload_worst = std::max(offload_worst, offload.exposed_s);
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
  out.offload_s = offload_worst;
  out.step_time_s = out.compute_s + out.recompute_s + out.tp_comm_s + out.cp_comm_s +
                    out.ep_comm_s + out.cpu_bound_s + out.pp_bubble_s + out.dp_comm_exposed_s +
                    out.optimizer_s + out.offload_s;
  const double world = static_cast<double>(p.world_size());
  const double sequences = microbatches * d.micro_batch * dp;
  out.tokens_per_s_per_gpu = sequences * d.seq / (out.step_time_s * world);
  out.mfu = sequences * data.model_flops_per_sequence / (out.step_time_s * data.mfu_peak * world);
  return out;
}

}  // namespace

LayoutKey layout_key_of(const Scenario& s) {
  const Parallelism& p = s.parallel;
  return {p.tp, p.sequence_parallel ? 1 : 0, p.cp, p.ep, p.etp, s.training.micro_batch};
}

StepTimeCache::StepTimeCache() : d_(std::make_unique<StepTimeCacheData>()) {}
StepTimeCache::~StepTimeCache() = default;
StepTimeCache::StepTimeCache(StepTimeCache&&) noexcept = default;
StepTimeCache& StepTimeCache::operator=(StepTimeCache&&) noexcept = default;

StepTime StepTimeModel::evaluate(const Scenario& s) const {
  return evaluate_with(*data_, s, layout_times(*data_, s));
}

StepTime StepTimeModel::evaluate(const Scenario& s, StepTimeCache& cache) const {
  StepTimeCacheData& cached = *cache.d_;
  const LayoutKey key = layout_key_of(s);
  if (cached.model != data_ || cached.key != key) {
    cached.times = layout_times(*data_, s);
    cached.model = data_;
    cached.key = key;
  }
  return evaluate_with(*data_, s, cached.times);
}

Result<StepTime> estimate_step_time(const Scenario& s, const Gpu& gpu, const Cluster& cluster,
                                    const StepTimeConstants& constants) {
  Result<StepTimeModel> model = StepTimeModel::prepare(s, gpu, cluster, constants);
  if (!model) return model.error();
  return model->evaluate(s);
}

Cluster default_cluster(const Gpu& gpu) {
  return Cluster{gpu.gpus_per_node,  gpu.nvlink_gbps,      gpu.inter_node_gbps,
                 gpu.host_link_gbps, gpu.host_memory_gbps, kDefaultNvmeGbps};
}

}  // namespace vramplan
