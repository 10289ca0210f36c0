// The roofline of one training microbatch on one GPU: for every operation of each kind of layer
// (projections, attention, MLP or experts, router, norms, embedding, LM head and loss), forward
// and backward, the FLOPs and HBM bytes after tensor/sequence/context/expert-parallel sharding,
// their arithmetic intensity, and whether the chosen GPU runs it memory- or compute-bound.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/error.h"
#include "vramplan/hardware.h"
#include "vramplan/precision.h"
#include "vramplan/scenario.h"
#include "vramplan/step_time.h"

namespace vramplan {

enum class Bound { kMemory, kCompute };
std::string_view bound_name(Bound b);  // "memory" | "compute"

struct RooflineOp {
  std::string op;                // "QKV projection"
  std::string kind;              // "matmul" | "grouped matmul" | "attention" | "elementwise"
  std::string pass;              // "forward" | "backward"
  std::string formula;           // forward FLOPs per GPU, e.g. "2·n·h·(a+2g)·d/t"
  double flops = 0;              // per GPU, one microbatch
  double bytes = 0;              // HBM traffic: inputs + weights + outputs
  double intensity = 0;          // FLOPs / byte
  double ridge = 0;              // FLOPs / byte where this op's roof turns: peak / bandwidth
  Bound bound = Bound::kMemory;  // intensity below the ridge: memory-bound
  double roofline_s = 0;         // max(FLOPs / peak, bytes / bandwidth): the ideal time
};

struct RooflineSection {
  std::string name;    // "dense layer, full attention"
  int64_t layers = 0;  // how many in the model (1 for embedding and head sections)
  std::vector<RooflineOp> ops;
  double flops = 0, bytes = 0, roofline_s = 0;  // forward + backward of one of them
};

struct Roofline {
  std::string gpu;
  DType compute_dtype = DType::kBf16;
  double matmul_tflops = 0;     // dense peak for the compute dtype
  double attention_tflops = 0;  // attention's: bf16 when training in fp8/fp4
  double vector_tflops = 0;     // non-tensor peak (element-wise operations)
  double hbm_gbps = 0;
  double matmul_ridge = 0;  // FLOPs / byte
  double attention_ridge = 0;
  double vector_ridge = 0;
  double tokens = 0;  // per GPU per microbatch before TP: s·b/cp
  std::vector<RooflineSection> sections;
};

// Per-operation roofline of the scenario's layout on `gpu`. Errors name the field: a layout that
// does not validate, or a GPU without a peak for the compute dtype or without HBM bandwidth.
Result<Roofline> compute_roofline(const Scenario& s, const Gpu& gpu);

// The roofline and the step time it leads to, rendered (roofline_report.cc). Stable JSON keys:
// gpu {id, compute_dtype, matmul_tflops, attention_tflops, vector_tflops, hbm_gbps, matmul_ridge,
// attention_ridge, vector_ridge},
// cluster {gpus_per_node, intra_node_gbps, inter_node_gbps}, tokens_per_microbatch,
// sections[] {name, layers, flops, bytes, roofline_s, ops[] {op, kind, pass, formula, flops,
// bytes, intensity, ridge, bound, roofline_s}}, step_time {compute_s, ..., mfu}.
nlohmann::json roofline_to_json(const Roofline& roofline, const StepTime& step,
                                const Cluster& cluster);
nlohmann::json step_time_to_json(const StepTime& step);
std::string render_roofline_table(const Scenario& s, const Roofline& roofline, const StepTime& step,
                                  const Cluster& cluster);
// One line per operation: section,layers,op,kind,pass,flops,bytes,intensity,ridge,bound,
// roofline_s,formula (RFC 4180 quoting).
std::string render_roofline_csv(const Roofline& roofline);

}  // namespace vramplan
