// Pipeline layer splits as named kinds: how the pp·vpp model chunks share the decoder layers
// (some kinds count the embedding and the loss as layers too). estimate() and the framework
// tables name a scenario's split by its kind; the planner searches over the kinds.
#pragma once

#include <cstdint>
#include <optional>

#include "vramplan/training/scenario.h"

namespace vramplan {

// The pipeline layer splits, by kind. kEven needs pp·vpp to divide the layers;
// kEmbeddingAndLoss / kEmbedding / kLoss count the embedding and/or the loss as a layer of the
// split (Megatron's --account-for-*-in-pipeline-split); kLighterEnds gives the first and last
// stage fewer layers than the rest (Llama 3's 405B layout; vpp = 1); kBalanced spreads a remainder
// over the first chunks; kBalancedEmbeddingAndLoss does that with the embedding and the loss
// counted as one layer each (torchtitan's generate_llm_fqn_per_model_part); kCompute is
// nanotron's split by compute cost (vpp = 1).
enum class SplitKind {
  kEven,
  kEmbeddingAndLoss,
  kEmbedding,
  kLoss,
  kLighterEnds,
  kBalanced,
  kBalancedEmbeddingAndLoss,
  kCompute
};

const char* split_name(SplitKind kind);  // "even", "embedding+loss", ..., "compute"

struct PipelineSplit {
  SplitKind kind = SplitKind::kEven;
  int64_t first_stage_layers = 0;  // kLighterEnds
  int64_t last_stage_layers = 0;
};

// Split kinds in the order that names a split: one whose chunk sizes equal an earlier kind's is
// that kind. Without a list in the request the planner tries the first kGenericSplitKinds; the
// last two are framework splits (torchtitan's, nanotron's) searched when the list names them.
inline constexpr SplitKind kSplitOrder[] = {SplitKind::kEven,
                                            SplitKind::kEmbeddingAndLoss,
                                            SplitKind::kLoss,
                                            SplitKind::kEmbedding,
                                            SplitKind::kLighterEnds,
                                            SplitKind::kBalanced,
                                            SplitKind::kBalancedEmbeddingAndLoss,
                                            SplitKind::kCompute};
inline constexpr int kGenericSplitKinds = 6;

// Writes a split into the parallelism's split fields.
void set_split(const PipelineSplit& split, Parallelism& parallel);

// The split kind a parallelism's split fields describe (set_split's inverse), or nothing for a
// combination that is no kind (balanced with only one of embedding/loss).
std::optional<SplitKind> split_kind_of(const Parallelism& parallel);

// The split `kind` for (pp, vpp) of a model with `layers` decoder layers, or nothing when the
// kind does not apply (it would not divide, or kLighterEnds with vpp > 1 or pp < 3).
std::optional<PipelineSplit> split_of(SplitKind kind, int64_t layers, int64_t pp, int64_t vpp);

}  // namespace vramplan
