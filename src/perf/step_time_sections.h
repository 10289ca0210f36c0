// The step-time model's per-microbatch sections: one layer of each kind, the embedding and the
// LM head (with MTP), each as compute, exposed TP / EP / CP communication and CPU launches.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "perf/network.h"
#include "perf/roofline_ops.h"
#include "vramplan/perf/step_time.h"

namespace vramplan {

inline constexpr int kLayerKinds = 4;  // dense / MoE × full / sliding attention

// A layer kind's index into per-kind arrays, and back.
inline int kind_index(LayerKind k) { return (k.moe ? 2 : 0) + (k.sliding ? 1 : 0); }
inline LayerKind kind_of(int index) { return LayerKind{index >= 2, index % 2 == 1}; }

// What evaluate() needs that does not change with the layout.
struct StepTimeData {
  double matmul_flops = 0;     // FLOP/s, peak, compute dtype
  double attention_flops = 0;  // FLOP/s, peak, attention_dtype()
  double vector_flops = 0;     // FLOP/s, peak, element-wise
  double hbm = 0;              // bytes/s, peak
  double sm_count = 0;         // streaming multiprocessors; 0 = not known
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
  // Whether a step's later parts are finite and not negative (step_time_parts.h).
  bool later_parts_bounded = false;
  int64_t mtp_layers = 0;
  LayerKind mtp_kind;
};

// Multipliers on an operation's compute time from its shape (step_time_sections.cc): a grouped
// GEMM's rows padded to whole 128-row tiles per expert, and attention bounded by its longest
// query tile when its tiles are fewer than the GPU's SMs. Both are 1 when they do not apply.
double grouped_padding(const OpCost& op);
double tile_occupancy_bound(const StepTimeData& data, const OpCost& op);

// The GEMMs' peak rate in `compute`, FLOP/s: the catalog's peak, except fp8, which reaches 0.9 of
// its 2x-of-bf16 peak at large shapes (step_time.cc).
double matmul_peak_flops(const Gpu& gpu, DType compute);

// Per microbatch, one layer (or the embedding, or the head) on one GPU.
struct SectionTime {
  double fwd = 0, bwd = 0;
  double attention_fwd = 0;  // what selective recomputation re-runs
  double tp_fwd = 0, tp_bwd = 0;
  double ep = 0, cp = 0;
  // With ep_comm_overlap, the expert all-to-all that a microbatch without a partner pays on top
  // of `ep` (what the paired compute hides): the first forward and the last backward.
  double ep_unpaired = 0;
  // Kernels and collectives the framework issues from the CPU, forward and backward.
  double launches_fwd = 0, launches_bwd = 0, attention_launches = 0;
  double total() const { return fwd + bwd + tp_fwd + tp_bwd + ep + cp; }
  void add(const SectionTime& o, double times) {
    ep_unpaired += times * o.ep_unpaired;
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

// Section times of one layout: one layer of each kind, the embedding, the head. They depend on
// the layout only through tp, sequence parallelism, cp, ep, etp and the micro-batch (LayoutKey).
struct LayoutTimes {
  std::array<SectionTime, kLayerKinds> per_kind{};
  SectionTime embedding, head;
};

using LayoutKey = std::array<int64_t, 6>;
LayoutKey layout_key_of(const Scenario& s);

SectionTime layer_time(const StepTimeData& data, const Scenario& s, const OpDims& d, LayerKind kind,
                       const Network& net);

SectionTime embedding_time(const StepTimeData& data, const Scenario& s, const OpDims& d,
                           const Network& net);

SectionTime head_time(const StepTimeData& data, const Scenario& s, const OpDims& d,
                      const Network& net);

}  // namespace vramplan
