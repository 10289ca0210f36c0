#include "perf/step_time_ranks.h"

#include "perf/step_time_offload.h"
#include "training/activations.h"
#include "training/chunk_split.h"
#include "training/scenario_checks.h"

namespace vramplan {
namespace {

// Gradients are reduced in buckets; the last one cannot overlap the backward pass. Megatron-LM's
// default bucket is 40M parameters (distributed_data_parallel_config.py bucket_size).
constexpr double kBucketElements = 40e6;

double bytes_per_element(DType t) { return static_cast<double>(bits_of(t)) / 8.0; }

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
  return (keeps_master_weights(tr) ? 4.0 : 0.0) + moments * moment_bytes;
}

// HBM traffic of the optimizer update per local parameter: the gradient read, the fp32 master
// copy and each moment tensor read and written, the working weights written (and read).
double optimizer_bytes_per_param(const Scenario& s) {
  const Training& tr = s.training;
  const double grad = tr.fp32_grad_accumulation ? 4.0 : bytes_per_element(tr.grad_dtype);
  const double fused =
      grad + 2 * optimizer_state_bytes_per_param(tr) + 2 * bytes_per_element(tr.param_dtype);
  // torch's foreach AdamW (torch/optim/adamw.py, _multi_tensor_adamw) runs one pass per op over
  // whole tensor lists: lerp_ on m (3 accesses), mul_ and addcmul_ on v (2 + 3), the weight
  // decay (2), sqrt (2), two in-place scalings of the root (2 + 2) and addcdiv_ into p (4): 20
  // accesses where the fused kernel makes 7. Measured on an H100: 2.6-2.8x the fused step's time
  // (reference/gpu_runs/h100-2026-11-27-shapes-memory.jsonl).
  constexpr double kForeachAccessesPerFused = 20.0 / 7.0;
  return s.conventions.optimizer_foreach_temporaries ? fused * kForeachAccessesPerFused : fused;
}

enum class Sharding { kNone, kOptimizer, kGradOp, kFull };

Sharding sharding_of(const Parallelism& p) {
  if (p.zero >= 3 || p.fsdp == FsdpMode::kFullShard || p.fsdp == FsdpMode::kHybridShard)
    return Sharding::kFull;
  if (p.fsdp == FsdpMode::kShardGradOp) return Sharding::kGradOp;
  if (p.zero >= 1 || p.distributed_optimizer) return Sharding::kOptimizer;
  return Sharding::kNone;
}

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

// `rank` holds the rank's decoder layers alone (time and count): what recomputation re-runs.
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

// Rank r's work without recomputation; `layers_only` receives its decoder layers' time.
RankWork rank_work(const StepTimeData& data, const Scenario& s, const LayoutTimes& times,
                   const std::array<double, kLayerKinds>& layers, int64_t r,
                   SectionTime& layers_only) {
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
  layers_only = rank.time;
  if (r == 0) {
    rank.time.add(times.embedding, 1);
    rank.dense_params += data.embedding_params / tp;
  }
  if (r == p.pp - 1) {
    rank.time.add(times.head, 1);
    rank.dense_params +=
        (data.head_params + (p.pp > 1 ? data.tied_head_params : 0)) / tp + data.last_stage_params;
  }
  return rank;
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

}  // namespace

void visited_ranks(const StepTimeData& data, const Scenario& s, std::vector<VisitedRank>& out) {
  const Parallelism& p = s.parallel;
  const ChunkSplit split(s.model, p);
  out.clear();
  std::array<double, kLayerKinds> previous_middle{};
  bool have_middle = false;
  for (int64_t r = 0; r < p.pp; ++r) {
    const std::array<double, kLayerKinds> layers = rank_layers(data, p, split, r);
    if (r > 0 && r < p.pp - 1) {
      if (have_middle && layers == previous_middle) continue;
      previous_middle = layers;
      have_middle = true;
    }
    out.push_back({r, layers});
  }
}

void pipeline_ranks(const StepTimeData& data, const Scenario& s, const LayoutTimes& times,
                    const std::vector<VisitedRank>& visited, PipelineRanks& out) {
  out.ranks.clear();
  out.layers_only.clear();
  for (const VisitedRank& v : visited) {
    SectionTime layers_only;
    out.ranks.push_back(rank_work(data, s, times, v.layers, v.rank, layers_only));
    out.layers_only.push_back(layers_only);
  }
}

void visit_pipeline_ranks(const StepTimeData& data, const Scenario& s, const LayoutTimes& times,
                          PipelineRanks& out) {
  std::vector<VisitedRank> visited;
  visited_ranks(data, s, visited);
  pipeline_ranks(data, s, times, visited, out);
}

RankWork with_recompute(const StepTimeData& data, const Scenario& s, const PipelineRanks& ranks,
                        size_t i) {
  RankWork rank = ranks.ranks[i];
  RankWork layers;  // recomputation re-runs decoder layers: their time alone
  layers.layer_count = rank.layer_count;
  layers.time = ranks.layers_only[i];
  add_recompute(s.model, s.training, layers);
  rank.recompute = layers.recompute;
  rank.recompute_launches = layers.recompute_launches;
  // The CPU issues kernels ahead of the GPU; when it cannot keep up (small GEMMs after heavy
  // tensor parallelism, eager frameworks) the GPU waits for it.
  rank.gpu = rank.time.total() + rank.recompute;
  rank.cpu = (rank.time.launches_fwd + rank.time.launches_bwd + rank.recompute_launches) *
             data.c.cpu_overhead_s;
  return rank;
}

RankWork slowest_rank(const StepTimeData& data, const Scenario& s, const PipelineRanks& ranks) {
  RankWork slowest;
  for (size_t i = 0; i < ranks.ranks.size(); ++i) {
    const RankWork rank = with_recompute(data, s, ranks, i);
    if (i == 0 || rank.busy() > slowest.busy()) slowest = rank;
  }
  return slowest;
}

RankTerms rank_terms(const StepTimeData& data, const Scenario& s, const PipelineRanks& ranks,
                     double microbatches) {
  const Parallelism& p = s.parallel;
  const Network net(data.cluster, data.c);
  const double tp = static_cast<double>(p.tp), cp = static_cast<double>(p.cp);
  const double dp = static_cast<double>(p.dp);
  const double ep = static_cast<double>(p.ep), etp = static_cast<double>(p.etp);
  const double dense_group = dp * cp, expert_group = tp * cp * dp / (etp * ep);
  RankTerms worst;
  for (size_t i = 0; i < ranks.ranks.size(); ++i) {
    // Only the offload terms read the recomputation.
    const RankWork rank = s.offload.any() ? with_recompute(data, s, ranks, i) : ranks.ranks[i];
    const double dp_time =
        dp_exposed(s, net, rank.dense_params, dense_group, tp, microbatches, rank) +
        dp_exposed(s, net, rank.expert_params, expert_group, etp * ep, microbatches, rank);
    const double local = rank.dense_params / sharded_over(p, dense_group) +
                         rank.expert_params / sharded_over(p, expert_group);
    const OffloadTime offload = rank_offload(data, s, rank, local, microbatches);
    const double optimizer = offload.gpu_optimizer_share * local * optimizer_bytes_per_param(s) /
                                 (data.hbm * data.c.optimizer_hbm_efficiency) +
                             data.c.kernel_overhead_s;
    worst.offload = std::max(worst.offload, offload.exposed_s);
    worst.dp_exposed = std::max(worst.dp_exposed, dp_time);
    worst.optimizer = std::max(worst.optimizer, optimizer);
  }
  return worst;
}

}  // namespace vramplan
