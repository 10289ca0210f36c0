#include "vramplan/perf/roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "perf/roofline_ops.h"
#include "training/scenario_checks.h"

namespace vramplan {
namespace {

const char* kind_name(OpKind k) {
  switch (k) {
    case OpKind::kMatmul:
      return "matmul";
    case OpKind::kGroupedMatmul:
      return "grouped matmul";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kMemory:
      return "elementwise";
  }
  return "";
}

std::string section_name(LayerKind kind) {
  return fmt::format("{} layer, {} attention", kind.moe ? "MoE" : "dense",
                     kind.sliding ? "sliding-window" : "full");
}

RooflineOp make_op(const Roofline& r, const OpCost& op, bool backward) {
  RooflineOp out;
  out.op = op.name;
  out.kind = kind_name(op.kind);
  out.pass = backward ? "backward" : "forward";
  out.formula = op.formula;
  out.flops = backward ? op.bwd_flops : op.fwd_flops;
  out.bytes = backward ? op.bwd_bytes : op.fwd_bytes;
  out.intensity = out.bytes > 0 ? out.flops / out.bytes : 0;
  // Element-wise work runs on the vector units; matmuls and attention on the tensor cores.
  double tflops = r.matmul_tflops;
  out.ridge = r.matmul_ridge;
  if (op.kind == OpKind::kMemory) {
    tflops = r.vector_tflops;
    out.ridge = r.vector_ridge;
  } else if (op.kind == OpKind::kAttention) {
    tflops = r.attention_tflops;
    out.ridge = r.attention_ridge;
  }
  out.bound = out.intensity < out.ridge ? Bound::kMemory : Bound::kCompute;
  const double peak = tflops * 1e12;
  out.roofline_s = std::max(out.flops / peak, out.bytes / (r.hbm_gbps * 1e9));
  return out;
}

RooflineSection make_section(const Roofline& r, std::string name, int64_t layers,
                             const OpList& ops) {
  RooflineSection section;
  section.name = std::move(name);
  section.layers = layers;
  for (bool backward : {false, true}) {
    for (int i = 0; i < ops.count; ++i) {
      RooflineOp op = make_op(r, ops.ops[i], backward);
      section.flops += op.flops;
      section.bytes += op.bytes;
      section.roofline_s += op.roofline_s;
      section.ops.push_back(std::move(op));
    }
  }
  return section;
}

std::optional<Error> check_gpu(const Gpu& gpu, DType compute) {
  if (gpu.peak_tflops(compute) <= 0)
    return Error{"gpu", gpu.id, "a GPU whose catalog entry gives a peak for the compute dtype",
                 fmt::format("{} lists no {} tensor-core peak", gpu.id, dtype_name(compute))};
  if (gpu.hbm_gbps <= 0)
    return Error{"gpu", gpu.id, "a GPU whose catalog entry gives hbm_gbps",
                 "memory bandwidth unknown"};
  return std::nullopt;
}

}  // namespace

std::string_view bound_name(Bound b) { return b == Bound::kMemory ? "memory" : "compute"; }

Result<Roofline> compute_roofline(const Scenario& s, const Gpu& gpu) {
  if (auto e = validate_scenario(s)) return *e;
  const DType compute = matmul_dtype(s.training);
  if (auto e = check_gpu(gpu, compute)) return *e;
  Roofline r;
  r.gpu = gpu.id;
  r.compute_dtype = compute;
  r.matmul_tflops = gpu.peak_tflops(compute);
  r.vector_tflops = gpu.fp32_tflops > 0 ? gpu.fp32_tflops : r.matmul_tflops;
  r.hbm_gbps = gpu.hbm_gbps;
  const double attention_peak = gpu.peak_tflops(attention_dtype(compute));
  r.attention_tflops = attention_peak > 0 ? attention_peak : r.matmul_tflops;
  r.matmul_ridge = r.matmul_tflops * 1e12 / (r.hbm_gbps * 1e9);
  r.attention_ridge = r.attention_tflops * 1e12 / (r.hbm_gbps * 1e9);
  r.vector_ridge = r.vector_tflops * 1e12 / (r.hbm_gbps * 1e9);
  const OpDims d = op_dims(s);
  r.tokens = d.tokens;

  // One section per kind of decoder layer, in the order they first appear.
  const ModelConfig& m = s.model;
  std::array<int64_t, 4> count{};
  std::vector<LayerKind> order;
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const bool moe = i < static_cast<int64_t>(m.moe_layers.size()) && m.moe_layers[i];
    const bool sliding = i < static_cast<int64_t>(m.layer_attention.size()) &&
                         m.layer_attention[i] == LayerAttention::kSliding;
    const int index = (moe ? 2 : 0) + (sliding ? 1 : 0);
    if (count[index]++ == 0) order.push_back(LayerKind{moe, sliding});
  }
  for (LayerKind kind : order) {
    OpList ops;
    layer_ops(s, d, kind, ops);
    r.sections.push_back(make_section(r, section_name(kind),
                                      count[(kind.moe ? 2 : 0) + (kind.sliding ? 1 : 0)], ops));
  }
  OpList embedding;
  embedding_ops(s, d, embedding);
  r.sections.push_back(make_section(r, "input embedding (first stage)", 1, embedding));
  OpList head;
  head_ops(s, d, head);
  r.sections.push_back(make_section(r, "final norm, LM head and loss (last stage)", 1, head));
  if (m.mtp_layers > 0) {
    OpList mtp;
    layer_ops(s, d, LayerKind{m.is_moe(), false}, mtp);
    mtp_extra_ops(s, d, mtp);
    r.sections.push_back(
        make_section(r, "multi-token-prediction module (last stage)", m.mtp_layers, mtp));
  }
  return r;
}

}  // namespace vramplan
