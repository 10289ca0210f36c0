#include "plan/activation_cache.h"

namespace vramplan {

size_t ActivationCache::KeyHash::operator()(const Key& k) const {
  uint64_t h = 0;
  for (int64_t v : k) {  // boost::hash_combine's mixing: small, close values spread out
    h ^= static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return static_cast<size_t>(h);
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
