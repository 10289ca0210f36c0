#include "plan/activation_cache.h"

#include <functional>

namespace vramplan {

size_t ActivationCache::KeyHash::operator()(const Key& k) const {
  size_t h = 0;
  for (int64_t v : k) h = h * 1000003 ^ std::hash<int64_t>{}(v);
  return h;
}

const ActivationTerms& ActivationCache::terms(const Parallelism& parallel, int64_t micro_batch,
                                              Recompute recompute) {
  const Key key = {parallel.tp, parallel.sequence_parallel ? 1 : 0, parallel.cp, parallel.etp,
                   micro_batch, static_cast<int64_t>(recompute)};
  auto found = terms_.find(key);
  if (found != terms_.end()) return found->second;
  if (terms_.size() >= kMaxEntries) terms_.clear();
  return terms_.emplace(key, memory_.activations(parallel, micro_batch, recompute)).first->second;
}

}  // namespace vramplan
