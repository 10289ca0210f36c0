// One search thread's ActivationTerms by what they depend on: FastMemoryModel::activations reads
// the layout only through tp, sequence parallelism, cp, etp, the micro-batch and the recompute
// mode (fast_memory.h), and the planner's outer loops come back to the same ones for each
// pipeline, data-parallel and expert degree (DeepSeek-V3 on 1,024 GPUs: 2.1 million branch
// inner loops, 7,944 distinct terms), so each is computed once.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include "training/fast/fast_memory.h"

namespace vramplan {

class ActivationCache {
 public:
  explicit ActivationCache(const FastMemoryModel& memory) : memory_(memory) {}

  // memory.activations(parallel, micro_batch, recompute).
  const ActivationTerms& terms(const Parallelism& parallel, int64_t micro_batch,
                               Recompute recompute);

 private:
  using Key = std::array<int64_t, 6>;
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  // Bounds the memory a thread keeps (about 2 MB) on requests with very many distinct terms.
  static constexpr size_t kMaxEntries = 16384;

  const FastMemoryModel& memory_;
  std::unordered_map<Key, ActivationTerms, KeyHash> terms_;
};

}  // namespace vramplan
