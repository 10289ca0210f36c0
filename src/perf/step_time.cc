#include "vramplan/perf/step_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "perf/roofline_ops.h"
#include "perf/step_time_offload.h"
#include "perf/step_time_parts.h"
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

double matmul_peak_flops(const Gpu& gpu, DType compute) {
  // fp8 GEMMs of 1 TFLOP or more run 1.79-1.82x as fast as bf16 on an H100 and an H200
  // (reference/gpu_runs/*-2026-11-27-speed.jsonl), not the 2x of the peaks.
  constexpr double kFp8RateOfPeak = 0.9;
  const double peak = gpu.peak_tflops(compute) * 1e12;
  return compute == DType::kFp8 ? peak * kFp8RateOfPeak : peak;
}

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
  data->matmul_flops = matmul_peak_flops(gpu, compute);
  const double attention_peak = gpu.peak_tflops(attention_dtype(compute));
  data->attention_flops = (attention_peak > 0 ? attention_peak : gpu.peak_tflops(compute)) * 1e12;
  data->vector_flops = (gpu.fp32_tflops > 0 ? gpu.fp32_tflops : gpu.peak_tflops(compute)) * 1e12;
  data->hbm = gpu.hbm_gbps * 1e9;
  data->sm_count = gpu.sm_count;
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
  data->later_parts_bounded = later_parts_bounded(*data);
  return StepTimeModel(std::move(data));
}

StepTime StepTimeModel::evaluate(const Scenario& s) const {
  const StepTimeData& data = *data_;
  PipelineRanks ranks;
  visit_pipeline_ranks(data, s, layout_times(data, s), ranks);
  const double microbatches = static_cast<double>(microbatches_of(s));
  return step_time_of(data, s, op_dims(s), microbatches, slowest_rank(data, s, ranks),
                      rank_terms(data, s, ranks, microbatches));
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
