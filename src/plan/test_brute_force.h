// The planner search tests' brute force: every layout of a superset, and which of them the search
// must visit, decided by the planner's conventions (see is_canonical) written out independently
// and by validate_scenario.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plan/test_search.h"
#include "training/scenario_checks.h"

namespace vramplan::testing {

// Valid and invalid shardings (zero with FSDP, a group without HYBRID_SHARD, ...).
inline std::vector<ShardingChoice> all_shardings() {
  return {{0, FsdpMode::kNone, 0, false},        {1, FsdpMode::kNone, 0, false},
          {2, FsdpMode::kNone, 0, false},        {3, FsdpMode::kNone, 0, false},
          {0, FsdpMode::kNone, 0, true},         {1, FsdpMode::kNone, 0, true},
          {0, FsdpMode::kFullShard, 0, false},   {0, FsdpMode::kShardGradOp, 0, false},
          {1, FsdpMode::kFullShard, 0, false},   {0, FsdpMode::kFullShard, 0, true},
          {0, FsdpMode::kHybridShard, 0, false}, {0, FsdpMode::kHybridShard, 2, false},
          {0, FsdpMode::kHybridShard, 4, false}, {0, FsdpMode::kNoShard, 0, false},
          {0, FsdpMode::kNone, 2, false}};
}

// Every split kind, in the order that names a split whose sizes two kinds share.
inline constexpr SplitKind kAllSplits[] = {SplitKind::kEven,
                                           SplitKind::kEmbeddingAndLoss,
                                           SplitKind::kLoss,
                                           SplitKind::kEmbedding,
                                           SplitKind::kLighterEnds,
                                           SplitKind::kBalanced,
                                           SplitKind::kBalancedEmbeddingAndLoss,
                                           SplitKind::kCompute};

// Without a list the planner tries the generic kinds; the framework ones only when listed.
inline bool searched_kind(const PlanRequest& r, SplitKind kind) {
  if (r.space.split.empty())
    return kind != SplitKind::kBalancedEmbeddingAndLoss && kind != SplitKind::kCompute;
  return std::find(r.space.split.begin(), r.space.split.end(), kind) != r.space.split.end();
}

// The planner's conventions for tp, sp and the pipeline.
inline bool conventional_outer(const PlanRequest& r, const PlanLayout& l) {
  const int64_t layers = r.base.model.num_layers;
  if (l.tp > r.cluster.gpus_per_node) return false;
  if (l.tp == 1 && l.sequence_parallel) return false;
  if (l.pp == 1 &&
      (l.vpp != 1 || l.schedule != Schedule::k1F1B || l.split.kind != SplitKind::kEven))
    return false;
  if (l.pp > 1) {
    if (!searched_kind(r, l.split.kind)) return false;
    // The split is one of split_of's, and no earlier allowed kind gives the same chunk sizes.
    const std::optional<PipelineSplit> want = split_of(l.split.kind, layers, l.pp, l.vpp);
    if (!want || want->first_stage_layers != l.split.first_stage_layers ||
        want->last_stage_layers != l.split.last_stage_layers)
      return false;
    auto sizes = [&](const PipelineSplit& split) {
      Scenario s = r.base;
      PlanLayout probe = l;
      probe.split = split;
      apply_layout(probe, s);
      if (validate_pipeline(r.base.model, s.parallel)) return std::vector<size_t>{};
      // A rank's chunks are its runs of consecutive layers; chunk k is run k / pp of rank k % pp.
      std::vector<std::vector<size_t>> runs;
      for (const RankLayout& rank : layout_pipeline(r.base.model, s.parallel, 1)) {
        runs.emplace_back();
        for (size_t i = 0; i < rank.layers.size(); ++i) {
          if (i == 0 || rank.layers[i] != rank.layers[i - 1] + 1) runs.back().push_back(0);
          ++runs.back().back();
        }
        // Every chunk must hold a layer.
        if (runs.back().size() != static_cast<size_t>(l.vpp)) return std::vector<size_t>{};
      }
      std::vector<size_t> out;
      for (int64_t k = 0; k < l.pp * l.vpp; ++k) out.push_back(runs[k % l.pp][k / l.pp]);
      return out;
    };
    const std::vector<size_t> mine = sizes(l.split);
    if (mine.empty()) return false;
    for (SplitKind earlier : kAllSplits) {
      if (earlier == l.split.kind) break;
      if (!searched_kind(r, earlier)) continue;
      const std::optional<PipelineSplit> other = split_of(earlier, layers, l.pp, l.vpp);
      if (other && sizes(*other) == mine) return false;
    }
  }
  return true;
}

// The planner's conventions for sharding.
inline bool conventional_sharding(const PlanRequest& r, const PlanLayout& l) {
  const ShardingChoice& sh = l.sharding;
  const int64_t data_ranks = l.dp * l.cp;
  const int64_t node_group = std::gcd(data_ranks, std::max<int64_t>(1, 8 / l.tp));
  const bool listed =
      (sh.fsdp == FsdpMode::kNone && sh.fsdp_shard_group == 0 && !sh.distributed_optimizer) ||
      (sh.fsdp == FsdpMode::kNone && sh.zero == 0 && sh.fsdp_shard_group == 0) ||
      ((sh.fsdp == FsdpMode::kFullShard || sh.fsdp == FsdpMode::kShardGradOp) && sh.zero == 0 &&
       sh.fsdp_shard_group == 0 && !sh.distributed_optimizer) ||
      (sh.fsdp == FsdpMode::kHybridShard && sh.zero == 0 && !sh.distributed_optimizer &&
       sh.fsdp_shard_group == node_group && node_group > 1 && node_group < data_ranks);
  if (!listed) return false;
  const int64_t expert_group =
      r.base.model.is_moe() ? std::max<int64_t>(1, l.tp * l.cp * l.dp / (l.ep * l.etp)) : 1;
  if (data_ranks == 1 && expert_group == 1 &&
      (sh.zero != 0 || sh.fsdp != FsdpMode::kNone || sh.distributed_optimizer))
    return false;
  return true;
}

struct Superset {
  std::vector<int64_t> eps = {1}, etps = {1};
  std::vector<int64_t> micro_batches;
};

// Calls f for every layout of the superset whose degrees multiply to the GPU count.
template <class F>
inline void for_each_superset_layout(const PlanRequest& r, const Superset& sup, F f) {
  const int64_t n = r.gpus;
  const std::vector<ShardingChoice> shardings = all_shardings();
  for (int64_t tp = 1; tp <= n; ++tp)
    for (int64_t pp = 1; pp <= n; ++pp)
      for (int64_t cp = 1; cp <= n; ++cp) {
        if (n % (tp * pp * cp) != 0) continue;
        const int64_t dp = n / (tp * pp * cp);
        for (int64_t vpp = 1; vpp <= 4; ++vpp)
          for (bool sp : {false, true})
            for (Schedule sched : {Schedule::k1F1B, Schedule::kInterleaved, Schedule::kGPipe})
              for (SplitKind kind : kAllSplits) {
                PipelineSplit split{kind, 0, 0};
                if (kind == SplitKind::kLighterEnds) {
                  const auto s = split_of(kind, r.base.model.num_layers, pp, vpp);
                  if (!s) continue;
                  split = *s;
                }
                PlanLayout outer{tp, sp, pp, vpp, sched, split, cp,
                                 1,  1,  dp, 1,   {},    {},    r.base.offload};
                if (!conventional_outer(r, outer)) continue;
                for (int64_t ep : sup.eps)
                  for (int64_t etp : sup.etps)
                    for (int64_t mb : sup.micro_batches)
                      for (Recompute rc :
                           {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
                        for (const ShardingChoice& sh : shardings) {
                          PlanLayout l{tp, sp,  pp, vpp, sched, split, cp,
                                       ep, etp, dp, mb,  rc,    sh,    r.base.offload};
                          if (l.etp <= r.cluster.gpus_per_node && conventional_sharding(r, l)) f(l);
                        }
              }
      }
}

// The layouts that should be searched: conventional and valid by validate_scenario.
inline std::map<std::string, PlanLayout> expected_layouts(const PlanRequest& r, const Superset& sup,
                                                          int64_t* rejected_by_validation) {
  std::map<std::string, PlanLayout> out;
  Scenario s = r.base;
  for_each_superset_layout(r, sup, [&](const PlanLayout& l) {
    apply_layout(l, s);
    if (validate_scenario(s)) {
      ++*rejected_by_validation;
      return;
    }
    out.emplace(key_of(l), l);
  });
  return out;
}

}  // namespace vramplan::testing
