// How a pipeline's pp·vpp model chunks share the decoder layers, in closed form: chunk c sits on
// rank c mod pp as its virtual stage c / pp (Megatron's order), and holds layers
// [begin(c), begin(c) + size(c)). The one place that knows every split kind: the memory
// estimate's layout (pipeline.cc), its allocation-free fast path (fast_memory.cc) and the step
// time (step_time.cc) all read it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "training/pipeline.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// REQUIRES: validate_pipeline(model, p) passed; `p` outlives the split (an explicit layout is
// read from it, not copied).
class ChunkSplit {
 public:
  ChunkSplit(const ModelConfig& model, const Parallelism& p) : ChunkSplit(model.num_layers, p) {
    // nanotron's split by compute cost has no closed form: its sizes, laid out once (such
    // layouts already leave the allocation-free fast path for estimate()).
    if (!p.compute_balanced_split || p.pp == 1 || !p.chunk_layers.empty()) return;
    computed_ = compute_cost_split(model, p.pp);
    listed_ = computed_;
  }

  // REQUIRES: p has no compute-cost split (it needs the model).
  ChunkSplit(int64_t layers, const Parallelism& p)
      : pp_(p.pp), vpp_(p.vpp), chunks_(p.pp * p.vpp), listed_(p.chunk_layers) {
    if (!listed_.empty()) return;
    first_ = p.first_stage_layers;
    last_ = p.last_stage_layers;
    if (first_ > 0 || last_ > 0) {
      // Megatron's --decoder-first/last-pipeline-num-layers: the first and last ranks hold those,
      // the other ranks share the rest evenly; each rank's vpp chunks share its layers evenly
      // (transformer_block.py get_num_layers_to_build).
      const int64_t middle = p.pp - (first_ > 0) - (last_ > 0);
      const int64_t rest = layers - first_ - last_;
      even_ = middle > 0 ? rest / middle / p.vpp : 0;
      per_round_ = layers / p.vpp;
      return;
    }
    embedding_ = p.embedding_as_stage;
    loss_ = p.loss_as_stage;
    const int64_t units = layers + embedding_ + loss_;
    even_ = units / chunks_;
    extra_ = p.balanced_split ? units % chunks_ : 0;
  }

  ChunkSplit(const ChunkSplit&) = delete;  // listed_ may point into computed_
  ChunkSplit& operator=(const ChunkSplit&) = delete;

  int64_t chunks() const { return chunks_; }

  int64_t size(int64_t c) const {
    if (!listed_.empty()) return listed_[static_cast<size_t>(c)];
    if (first_ > 0 || last_ > 0) {
      const int64_t rank = c % pp_;
      if (rank == 0 && first_ > 0) return first_ / vpp_;
      if (rank == pp_ - 1 && last_ > 0) return last_ / vpp_;
      return even_;
    }
    return even_ + (c < extra_) - (embedding_ && c == 0) - (loss_ && c == chunks_ - 1);
  }

  int64_t begin(int64_t c) const {
    if (c == 0) return 0;
    if (!listed_.empty()) {
      int64_t start = 0;
      for (int64_t i = 0; i < c; ++i) start += listed_[static_cast<size_t>(i)];
      return start;
    }
    if (first_ > 0 || last_ > 0) {
      // Whole rounds of pp chunks before this one, then the ranks before it in its round (all
      // middle ranks after rank 0, since the last rank ends a round).
      const int64_t rank = c % pp_;
      return (c / pp_) * per_round_ + (rank > 0 ? size(0) + (rank - 1) * even_ : 0);
    }
    return c * even_ + std::min(c, extra_) - (embedding_ ? 1 : 0);
  }

 private:
  int64_t pp_, vpp_, chunks_;
  std::span<const int64_t> listed_;  // an explicit layout's (or the compute split's) sizes
  std::vector<int64_t> computed_;    // the compute-cost split's storage
  int64_t first_ = 0, last_ = 0;
  bool embedding_ = false, loss_ = false;
  int64_t even_ = 0, extra_ = 0, per_round_ = 0;
};

}  // namespace vramplan
