// The work of one training microbatch, operation by operation, on one GPU after tensor-,
// sequence-, context- and expert-parallel sharding: FLOPs and HBM bytes of each operation's
// forward and backward pass. One source for the `roofline` report and the step-time model, so
// the two cannot disagree. Allocation-free: the planner evaluates it for millions of layouts.
//
// Conventions (docs/roofline.md):
//   - A GEMM [M×K]·[K×N] costs 2·M·N·K FLOPs forward and twice that backward (input gradient
//     and weight gradient). Bytes = inputs + weights + outputs in their dtypes.
//   - Attention executes 2·n·s_kv·a·(d_qk + d_v) FLOPs forward, halved by the causal mask
//     (flash attention skips masked blocks; unfused attention computes them); backward is 2.5×
//     forward with flash attention (it recomputes the scores) and 2× without. MFU's model FLOPs
//     count attention without the causal halving, as PaLM, Megatron-LM and nanotron do.
//   - Element-wise operations (norms, residual adds, activations, loss) are memory traffic.
#pragma once

#include <cstdint>

#include "vramplan/model/model.h"
#include "vramplan/model/precision.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

enum class OpKind {
  kMatmul,         // one GEMM per pass (dgrad + wgrad backward)
  kGroupedMatmul,  // routed experts: one GEMM per local expert
  kAttention,      // flash (or unfused) attention core
  kMemory,         // element-wise: bound by HBM bandwidth
};

// The layout values a microbatch's costs depend on, per GPU.
struct OpDims {
  double seq = 0;          // s
  double micro_batch = 0;  // b
  double tokens = 0;       // n = s·b/cp: the microbatch's tokens on this context-parallel rank
  double tp = 1;           // t
  double tp_sp = 1;        // divisor of hidden-wide tensors outside TP regions: t with SP, else 1
  double ep = 1;
  double etp = 1;
  double act_bytes = 2;    // activation dtype
  double param_bytes = 2;  // weights as the GEMMs read them
  double wgrad_bytes = 8;  // weight-gradient write: fp32 read-modify-write when accumulating
  double vocab = 0;        // padded vocabulary
  // Bytes of one fp8 value with its scale when the decoder's linears run in fp8 (1; 1 + 1/32
  // with block scales), 0 when they do not.
  double fp8_value_bytes = 0;
};

OpDims op_dims(const Scenario& s);

struct OpCost {
  const char* name = "";     // "QKV projection"
  const char* formula = "";  // forward FLOPs on one GPU, e.g. "2·n·h·(a+2g)·d/t"
  OpKind kind = OpKind::kMemory;
  double fwd_flops = 0, fwd_bytes = 0;
  double bwd_flops = 0, bwd_bytes = 0;
  double model_flops = 0;  // forward FLOPs as MFU counts them (attention without causal halving)
  double gemm_m = 0, gemm_n = 0, gemm_k = 0;  // one forward GEMM (per expert when grouped)
  double gemms = 0;                           // GEMMs per pass (local experts when grouped)
  double kernels = 1;                         // kernel launches forward (backward: twice)
  // Attention: the query tiles that run in parallel, counted in units of the longest one (under
  // the causal mask the last tile attends to every key, twice the average), and the kernel's
  // efficiency at this head dimension relative to d = 128 (attention_dim_scale).
  double attention_tiles = 0;
  double attention_scale = 1;
  // A decoder-layer GEMM that runs in fp8 under fp8 training (not the router), and whether the
  // norm before it writes its input (Transformer Engine's LayerNormLinear casts it there).
  bool fp8_linear = true;
  bool input_from_norm = false;
  bool selective = false;  // re-run by selective recomputation
  // Sized by the tokens routed to this rank's experts, known only once the router has run
  // (dropless routing): a CUDA graph, which replays fixed shapes, cannot capture it.
  bool dynamic_shape = false;
};

inline constexpr int kMaxOps = 20;

struct OpList {
  int count = 0;
  OpCost ops[kMaxOps];
  void add(const OpCost& op) {
    if (count < kMaxOps) ops[count++] = op;
  }
};

// What distinguishes decoder layers from one another.
struct LayerKind {
  bool moe = false;
  bool sliding = false;
};

// One decoder layer.
void layer_ops(const Scenario& s, const OpDims& d, LayerKind kind, OpList& out);
// The input embedding (first pipeline stage).
void embedding_ops(const Scenario& s, const OpDims& d, OpList& out);
// Final norm, LM head and cross-entropy loss (last pipeline stage).
void head_ops(const Scenario& s, const OpDims& d, OpList& out);
// One DeepSeek-V3 multi-token-prediction module beyond its transformer block: its two norms,
// the projection of [h; embedding] back to h, and its LM head and loss.
void mtp_extra_ops(const Scenario& s, const OpDims& d, OpList& out);

// The dtype attention runs in: the activation dtype, except that fp8/fp4 training keeps
// attention in bf16 (Transformer Engine's default; FlashAttention's fp8 kernels are for inference).
DType attention_dtype(DType activation);

// Attention keys a query attends to, on average, and without the causal mask.
double attended_keys(const Scenario& s, bool sliding, bool causal);

}  // namespace vramplan
