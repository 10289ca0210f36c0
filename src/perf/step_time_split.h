// Decoder layers per pipeline model chunk in closed form, without building the layout: the
// step-time model walks every chunk for every layout the planner tries, allocation-free.
// pipeline.cc's layout_pipeline is the reference (step_time_test checks the two agree).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "training/pipeline.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// REQUIRES: validate_pipeline(model, p) passed.
class ChunkSplit {
 public:
  ChunkSplit(const ModelConfig& model, const Parallelism& p) : ChunkSplit(model.num_layers, p) {
    // nanotron's split by compute cost has no closed form: its sizes, laid out once (such
    // layouts already leave the allocation-free fast path for estimate()).
    if (!p.compute_balanced_split || p.pp == 1) return;
    sizes_ = compute_cost_split(model, p.pp);
    starts_.assign(sizes_.size(), 0);
    for (size_t c = 1; c < sizes_.size(); ++c) starts_[c] = starts_[c - 1] + sizes_[c - 1];
  }

  // REQUIRES: p has no compute-cost split (it needs the model).
  ChunkSplit(int64_t layers, const Parallelism& p) : par_(p), chunks_(p.pp * p.vpp) {
    explicit_ = p.first_stage_layers > 0 || p.last_stage_layers > 0;
    if (explicit_) {
      const int64_t middle = p.pp - (p.first_stage_layers > 0) - (p.last_stage_layers > 0);
      const int64_t rest = layers - p.first_stage_layers - p.last_stage_layers;
      even_ = middle > 0 ? rest / middle : 0;
      return;
    }
    const int64_t units = layers + p.embedding_as_stage + p.loss_as_stage;
    even_ = units / chunks_;
    extra_ = p.balanced_split ? units % chunks_ : 0;
  }

  int64_t size(int64_t c) const {
    if (!sizes_.empty()) return sizes_[static_cast<size_t>(c)];
    if (explicit_) {
      if (c == 0 && par_.first_stage_layers > 0) return par_.first_stage_layers;
      if (c == chunks_ - 1 && par_.last_stage_layers > 0) return par_.last_stage_layers;
      return even_;
    }
    return even_ + (c < extra_) - (par_.embedding_as_stage && c == 0) -
           (par_.loss_as_stage && c == chunks_ - 1);
  }

  int64_t begin(int64_t c) const {
    if (!starts_.empty()) return starts_[static_cast<size_t>(c)];
    if (c == 0) return 0;
    if (explicit_) return size(0) + (c - 1) * even_;
    return c * even_ + std::min(c, extra_) - (par_.embedding_as_stage ? 1 : 0);
  }

 private:
  Parallelism par_;
  int64_t chunks_;
  bool explicit_ = false;
  int64_t even_ = 0, extra_ = 0;
  std::vector<int64_t> sizes_, starts_;  // the compute-cost split's, when it is one
};

}  // namespace vramplan
