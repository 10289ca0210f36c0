// What a StepTimeCache keeps (vramplan/perf/step_time.h): each part of a step computed by
// evaluate() once per value of what it depends on, for a caller whose inner loops vary few of the
// layout's dimensions (the planner). step_time_cache.cc runs evaluate() and
// evaluate_unless_slower() on it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "perf/step_time_ranks.h"

namespace vramplan {

// What the ranks depend on beyond the section times (LayoutKey): the pipeline's shape and split.
struct PipelineShapeKey {
  int64_t pp = 0, vpp = 0;
  int64_t first_stage_layers = 0, last_stage_layers = 0;
  bool embedding_as_stage = false, loss_as_stage = false;
  bool balanced_split = false, compute_balanced_split = false;
  std::vector<int64_t> chunk_layers;
};

// What rank_terms depends on beyond the ranks: the sharding, and the recompute mode when the
// layout offloads (-1 otherwise).
struct ShardingKey {
  int64_t zero = 0;
  int fsdp = 0;
  int64_t fsdp_shard_group = 0;
  bool distributed_optimizer = false;
  int recompute = -1;
  bool operator==(const ShardingKey&) const = default;
};

inline constexpr size_t kRecomputeModes = 4;  // Recompute's values

struct LayoutKeyHash {
  size_t operator()(const LayoutKey& k) const {
    uint64_t h = 0;
    for (int64_t v : k)  // boost::hash_combine's mixing: small, close values spread out
      h ^= static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

// What a StepTimeCache holds: the model it was filled from (kept alive, so that its address
// cannot be reused by another); the section times and dimensions of every LayoutKey met (the
// planner's outer loops come back to the same ones for each pipeline), up to kMaxLayoutKeys;
// the last pipeline shape's visited ranks; the last layout's pipeline ranks, their slowest under
// each recompute mode met since, and their terms (with its data-parallel degree and microbatches
// per step) under each sharding.
struct StepTimeCacheData {
  struct Sections {
    LayoutTimes times;
    OpDims dims;
    bool finite = false;  // every section time is finite
  };
  static constexpr size_t kMaxLayoutKeys = 8192;  // about 5 MB
  std::shared_ptr<const StepTimeData> model;
  std::unordered_map<LayoutKey, Sections, LayoutKeyHash> sections;
  LayoutKey key{};
  const Sections* current = nullptr;  // sections[key]
  bool shape_known = false;
  PipelineShapeKey shape;
  std::vector<VisitedRank> visited;  // of the shape
  bool ranks_known = false;          // for key and shape
  PipelineRanks ranks;
  int64_t dp = 0, microbatches = 0;  // the terms' besides the ranks'

  std::array<bool, kRecomputeModes> slowest_known{};
  std::array<RankWork, kRecomputeModes> slowest{};
  std::vector<std::pair<ShardingKey, RankTerms>> terms;
};

}  // namespace vramplan
