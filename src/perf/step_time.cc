#include "vramplan/perf/step_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "perf/roofline_ops.h"
#include "perf/step_time_offload.h"
#include "perf/step_time_ranks.h"
#include "perf/step_time_sections.h"
#include "training/scenario_checks.h"
#include "vramplan/model/params.h"

namespace vramplan {
namespace {

LayerKind kind_of_layer(const ModelConfig& m, size_t layer) {
  const bool moe = layer < m.moe_layers.size() && m.moe_layers[layer];
  const bool sliding =
      layer < m.layer_attention.size() && m.layer_attention[layer] == LayerAttention::kSliding;
  return LayerKind{moe, sliding};
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

// The step from its parts: the slowest rank's microbatches, the pipeline's fill, drain and sends,
// and the worst rank's per-step terms.
StepTime step_time_of(const StepTimeData& data, const Scenario& s, const OpDims& d,
                      double microbatches, const RankWork& slowest, const RankTerms& terms) {
  const Parallelism& p = s.parallel;
  const Network net(data.cluster, data.c);
  StepTime out;
  const SectionTime& t = slowest.time;
  out.compute_s = microbatches * (t.fwd + t.bwd);
  out.recompute_s = microbatches * slowest.recompute;
  out.tp_comm_s = microbatches * (t.tp_fwd + t.tp_bwd);
  out.cp_comm_s = microbatches * t.cp;
  out.ep_comm_s = microbatches * t.ep;
  out.cpu_bound_s = microbatches * (slowest.busy() - slowest.gpu);
  out.pp_bubble_s = pipeline_seconds(data, s, d, net, microbatches, slowest.busy());
  out.dp_comm_exposed_s = terms.dp_exposed;
  out.optimizer_s = terms.optimizer;
  out.offload_s = terms.offload;
  out.step_time_s = out.compute_s + out.recompute_s + out.tp_comm_s + out.cp_comm_s +
                    out.ep_comm_s + out.cpu_bound_s + out.pp_bubble_s + out.dp_comm_exposed_s +
                    out.optimizer_s + out.offload_s;
  const double world = static_cast<double>(p.world_size());
  const double sequences = microbatches * d.micro_batch * static_cast<double>(p.dp);
  out.tokens_per_s_per_gpu = sequences * d.seq / (out.step_time_s * world);
  out.mfu = sequences * data.model_flops_per_sequence / (out.step_time_s * data.mfu_peak * world);
  return out;
}

// Field by field: comparing the keys as arrays costs a memcmp call per layout.
bool same_layout_key(const LayoutKey& a, const LayoutKey& b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4] &&
         a[5] == b[5];
}

bool same_shape(const PipelineShapeKey& k, const Parallelism& p) {
  return k.pp == p.pp && k.vpp == p.vpp && k.first_stage_layers == p.first_stage_layers &&
         k.last_stage_layers == p.last_stage_layers &&
         k.embedding_as_stage == p.embedding_as_stage && k.loss_as_stage == p.loss_as_stage &&
         k.balanced_split == p.balanced_split &&
         k.compute_balanced_split == p.compute_balanced_split && k.chunk_layers == p.chunk_layers;
}

PipelineShapeKey shape_key_of(const Parallelism& p) {
  PipelineShapeKey k;
  k.pp = p.pp;
  k.vpp = p.vpp;
  k.first_stage_layers = p.first_stage_layers;
  k.last_stage_layers = p.last_stage_layers;
  k.embedding_as_stage = p.embedding_as_stage;
  k.loss_as_stage = p.loss_as_stage;
  k.balanced_split = p.balanced_split;
  k.compute_balanced_split = p.compute_balanced_split;
  k.chunk_layers = p.chunk_layers;
  return k;
}

// The rank terms read the recompute mode only through offload (rank_terms).
ShardingKey sharding_key_of(const Scenario& s) {
  const Parallelism& p = s.parallel;
  const int recompute = s.offload.any() ? static_cast<int>(s.training.recompute) : -1;
  return {p.zero, static_cast<int>(p.fsdp), p.fsdp_shard_group, p.distributed_optimizer, recompute};
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
  const StepTimeData& data = *data_;
  PipelineRanks ranks;
  visit_pipeline_ranks(data, s, layout_times(data, s), ranks);
  const double microbatches = static_cast<double>(microbatches_of(s));
  return step_time_of(data, s, op_dims(s), microbatches, slowest_rank(data, s, ranks),
                      rank_terms(data, s, ranks, microbatches));
}

// The same steps as above, each redone only when what it depends on changed since the last
// layout: the section times (LayoutKey), the visited ranks (PipelineShapeKey), their work (both),
// their slowest (also the recompute mode) and their terms (also the data-parallel degree, the
// microbatches per step and the sharding, ShardingKey).
StepTime StepTimeModel::evaluate(const Scenario& s, StepTimeCache& cache) const {
  const StepTimeData& data = *data_;
  StepTimeCacheData& c = *cache.d_;
  if (c.model != data_) {
    c.sections.clear();
    c.current = nullptr;
    c.model = data_;
    c.shape_known = false;
  }
  const LayoutKey key = layout_key_of(s);
  if (!c.current || !same_layout_key(c.key, key)) {
    if (c.sections.size() >= StepTimeCacheData::kMaxLayoutKeys) c.sections.clear();
    auto [at, added] = c.sections.try_emplace(key);
    if (added) at->second = {layout_times(data, s), op_dims(s)};
    c.current = &at->second;
    c.key = key;
    c.ranks_known = false;
  }
  if (!c.shape_known || !same_shape(c.shape, s.parallel)) {
    visited_ranks(data, s, c.visited);
    c.shape = shape_key_of(s.parallel);
    c.shape_known = true;
    c.ranks_known = false;
  }
  const int64_t microbatches = microbatches_of(s);
  if (!c.ranks_known) {
    pipeline_ranks(data, s, c.current->times, c.visited, c.ranks);
    c.ranks_known = true;
    c.slowest_known.fill(false);
    c.terms.clear();
  }
  if (c.dp != s.parallel.dp || c.microbatches != microbatches) {
    c.dp = s.parallel.dp;
    c.microbatches = microbatches;
    c.terms.clear();
  }
  const size_t mode = static_cast<size_t>(s.training.recompute);
  if (!c.slowest_known[mode]) {
    c.slowest[mode] = slowest_rank(data, s, c.ranks);
    c.slowest_known[mode] = true;
  }
  const ShardingKey sharding = sharding_key_of(s);
  const RankTerms* terms = nullptr;
  for (const auto& [k, t] : c.terms)
    if (k == sharding) terms = &t;
  if (!terms) {
    c.terms.emplace_back(sharding, rank_terms(data, s, c.ranks, static_cast<double>(microbatches)));
    terms = &c.terms.back().second;
  }
  return step_time_of(data, s, c.current->dims, static_cast<double>(microbatches), c.slowest[mode],
                      *terms);
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
