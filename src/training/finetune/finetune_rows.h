// The rows fine-tuning puts in a training estimate in place of the full model states, and the
// activations its adapters add. Called by estimate.cc when finetune_active().
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/term.h"
#include "training/model_states.h"
#include "training/pipeline.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/finetune.h"

namespace vramplan {

// QLoRA's dequantized copy of the linear being computed: a forward/backward transient, freed
// by the optimizer step (estimate.cc leaves it out of that phase).
inline constexpr const char* kDequantizedWeightRow = "dequantized weight buffer";

struct FinetuneRow {
  std::string component;
  Term term;
  CountsToward toward = CountsToward::kAllocated;
  const char* source = "";
};

// Weights (trainable and frozen), gradients, master weights and optimizer states of one rank.
std::vector<FinetuneRow> finetune_model_states(const Scenario& s, const ParamCounts& counts,
                                               const RankLayout& rank, const Sharding& sharding,
                                               bool explain);

// The r-wide adapter intermediates (x·A) each targeted projection keeps for backward.
std::vector<FinetuneRow> finetune_activations(const Scenario& s, const RankLayout& rank,
                                              bool explain);

// Leading decoder layers no backward pass reaches: the frozen first layers, when nothing before
// them trains (a frozen embedding, or LoRA/QLoRA). They keep no activations.
int64_t layers_without_backward(const Scenario& s);

}  // namespace vramplan
