// The roofline of one training microbatch on one GPU: for every operation of each kind of layer
// (projections, attention, MLP or experts, router, norms, embedding, LM head and loss), forward
// and backward, the FLOPs and HBM bytes after tensor/sequence/context/expert-parallel sharding,
// their arithmetic intensity, and whether the chosen GPU runs it memory- or compute-bound.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/model/precision.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/training/scenario.h"

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

}  // namespace vramplan
