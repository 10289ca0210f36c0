// The parts estimate() builds one pipeline rank from (estimate.cc): what is computed once per
// scenario (Context), the row collector (StageBuilder), and the row groups, each in its own file:
// model states (estimate_states.cc), activations (estimate_activations.cc) and the memory beyond
// the model's tensors (estimate_beyond_tensors.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/term.h"
#include "training/model_states.h"
#include "training/pipeline.h"
#include "vramplan/model/params.h"
#include "vramplan/training/estimate.h"

namespace vramplan::estimate_parts {

inline constexpr const char* kUnshardedStageRow = "unsharded params + grads";
inline constexpr const char* kRopeCacheRow = "RoPE cache (torchtune)";
inline constexpr const char* kGatheredRow = "unsharded parameter buffers";
// The layers FSDP prefetches in the backward (model_states.h fsdp_backward_prefetched_params);
// their part hidden under the freed logits, reserved.
inline constexpr const char* kPrefetchedRow = "prefetched parameter buffers";
inline constexpr const char* kPrefetchedReservedRow =
    "prefetched parameter buffers (reserved beside the logits)";
// FSDP2's last forward all-gather output, kept through the loss's forward
// (model_states.h fsdp_retained_gather_params); where the loss's backward holds more than that,
// reserved.
inline constexpr const char* kRetainedGatherRow = "last all-gather output (kept through the loss)";
inline constexpr const char* kRetainedGatherReservedRow =
    "last all-gather output (reserved beside the logits)";
// The loss's backward-only part (activations.h loss_backward_only) where the forward's loss with
// the kept all-gather output is the larger moment: reserved.
inline constexpr const char* kLossBackwardReservedRow =
    "loss backward (reserved beside the all-gather output)";
inline constexpr const char* kSourceRetainedGather =
    "PyTorch FSDP2 _fsdp_param_group.py FSDPParamGroup.wait_for_unshard (all_gather_state: the "
    "forward's last all-gather output, freed by the root's _post_forward)";
inline constexpr const char* kSourcePrefetch =
    "PyTorch FSDP2 _fsdp_param_group.py FSDPParamGroup.pre_backward (_backward_prefetch of the "
    "next layer from a layer's pre-backward; the root's, which runs the loss, prefetches the "
    "last layer, never resharded after forward)";
// One FSDP unit's unsharded gradients (compute dtype, and the reduce-dtype copy of a mixed
// policy) waiting for their reduce-scatter; their part hidden under the freed logits, reserved.
inline constexpr const char* kUnitGradientsRow = "unit gradients (before reduce-scatter)";
inline constexpr const char* kUnitGradientsReservedRow =
    "unit gradients (reserved beside the logits)";
// torch.distributed.pipelining's last stage keeps each microbatch's output until the next step,
// and merges them (torch.cat) when the step returns.
inline constexpr const char* kKeptOutputsRow = "pipeline outputs kept (logits)";
inline constexpr const char* kMergedOutputsRow = "pipeline outputs merged (step's return)";
// SDPA's math kernel in one layer's backward (activations.h math_attention_backward_scratch).
inline constexpr const char* kMathScratchRow = "attention backward scratch (SDPA math kernel)";
// The gradients the rank's last layer holds as its backward starts (activations.h
// layer_backward_transient), less what the freed logits hide.
inline constexpr const char* kBackwardTransientRow = "backward transients (last layer's MLP)";
// The last rank of an interleaved pipeline whose chunks hold unequal layers: the layers alive
// beyond those at its loss, at the moment an earlier chunk's forward leaves more alive.
inline constexpr const char* kEarlierChunkRow = "activations (earlier chunk's peak)";
// The recompute working set's part hidden under the freed logits: reserved, not allocated.
inline constexpr const char* kRecomputeReservedRow =
    "recompute working set (reserved beside the logits)";
// QLoRA's dequantisation transient's part hidden under the freed logits: reserved.
inline constexpr const char* kDequantReservedRow =
    "dequantized weight buffer (reserved beside the logits)";

// Collects one pipeline rank's rows.
class StageBuilder {
 public:
  StageBuilder(StageEstimate& stage, bool explain) : stage_(stage), explain_(explain) {}

  void add(const char* component, Term term, CountsToward toward, const char* source) {
    total_ += std::min(term.bytes, kMaxBytes);
    if (term.bytes > kMaxBytes || total_ > kMaxBytes) overflow_ = true;
    if (term.bytes <= 0 || overflow_) return;
    stage_.rows.push_back(Row{component, static_cast<int64_t>(std::min(term.bytes, kMaxBytes)),
                              toward, std::move(term.formula), explain_ ? source : ""});
  }
  bool overflow() const { return overflow_; }
  // The bytes of the row `component` added before (0 when there is none).
  Wide row_bytes_of(std::string_view component) const {
    for (const Row& r : stage_.rows)
      if (r.component == component) return r.bytes;
    return 0;
  }
  // Takes up to `bytes` off the row `component` added before (removing it when nothing is left)
  // and says why in its formula; returns the bytes taken.
  Wide shrink(std::string_view component, Wide bytes, const std::string& why) {
    for (auto it = stage_.rows.begin(); it != stage_.rows.end(); ++it) {
      if (it->component != component) continue;
      const Wide taken = std::min<Wide>(it->bytes, std::max<Wide>(bytes, 0));
      it->bytes -= static_cast<int64_t>(taken);
      total_ -= taken;
      if (explain_ && taken > 0) it->formula += ", " + why;
      if (it->bytes == 0) stage_.rows.erase(it);
      return taken;
    }
    return 0;
  }

 private:
  StageEstimate& stage_;
  bool explain_;
  Wide total_ = 0;  // all rows so far; an overflow is reported before any int64 sum is taken
  bool overflow_ = false;
};

// Everything computed once per scenario and shared by all ranks.
struct Context {
  const Scenario& s;
  const ParamCounts& counts;
  Sharding sharding;
  Term dense_layer;  // activations of one dense layer, one microbatch
  Term moe_layer;    // ... of one MoE layer
  Term layer_input;  // what a fully recomputed layer keeps
  int64_t microbatches;
  bool explain;
};

struct PhaseTotals {
  int64_t forward_backward = 0, optimizer_step = 0, first_step = 0;  // tensors only
  int64_t layer_activations = 0;  // the "activations" row, whatever phase peaks
};

// Weights, gradients, framework copies, master weights, optimizer states and gathered buffers.
void add_model_states(const Context& c, const GpuParams& g, StageBuilder& out);
// torchtune's RoPE module (one, shared by every layer) caches cos and sin for every position up
// to the model's max_seq_len in fp32: a buffer on each stage with layers (model_code torchtune).
void add_rope_cache(const Context& c, int64_t stage_layers, StageBuilder& out);
// The FSDP / ZeRO-3 gather buffers of a rank with sharded parameters (model_states.h
// fsdp_gathered_params), with one unit's unsharded gradients when `gradients` (fine-tuning's
// frozen base has none).
void add_gathered_params(const Context& c, const GpuParams& g, bool gradients, StageBuilder& out);
// The stored layer activations, recompute working set, stage outputs and embedding activations.
void add_activations(const Context& c, const RankLayout& rank, StageBuilder& out);
// The last stage's final norm and LM head inputs, logits and loss, and MTP layers.
void add_head_terms(const Context& c, const RankLayout& rank, StageBuilder& out);
// With lazily created gradients and one microbatch, the moment late in the backward when the
// model's first layer starts it (layers/first_layer_backward.cc): the gradients not made yet and
// what that layer holds then. nullopt where that op order was not read (several GPUs, other
// model code, fine-tuning, offload, autocast copies, fp8, partial recompute).
struct FirstLayerMoment {
  int64_t pending_gradients = 0;  // bytes of the gradients not made yet
  int64_t alive = 0;              // the layer's saved tensors and in-flight gradients
  std::string gradients_note;     // explain only
  std::string formula;
};
// `layer_activations`: the stage's "activations" row (every layer's saved tensors), which the
// early twin of a sink-attention model's moment (the last layer's attention backward) holds.
std::optional<FirstLayerMoment> first_layer_backward_moment(const Context& c,
                                                            Wide layer_activations);
// Its row, in place of the activation rows when it is the forward/backward peak.
inline constexpr const char* kFirstLayerBackwardRow = "first layer's backward (saved + in flight)";

// Workspaces, persistent buffers, the allocator pool, CUDA context and NCCL buffers.
void add_beyond_tensors(const Context& c, const PhaseTotals& phases, StageEstimate& stage,
                        StageBuilder& out);

}  // namespace vramplan::estimate_parts
