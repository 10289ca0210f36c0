// The planner's search: enumeration of the layout space, the validity rules of scenario_checks.cc
// for the dimensions it varies, memory by FastMemoryModel, pruning, and ranking on all cores.
// plan() (planner.cc) wraps it with request checks, the step-time model and the explanations.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "training/fast/fast_memory.h"
#include "vramplan/perf/step_time.h"
#include "vramplan/plan/layout_space.h"
#include "vramplan/plan/planner.h"

namespace vramplan {

// What ranks the layouts that fit. The planner uses the step-time model (StepTimeModel); tests
// may time layouts with a function of their own to check the search itself.
class LayoutTimer {
 public:
  virtual ~LayoutTimer() = default;
  // REQUIRES: `layout` is valid (validate_scenario passes).
  virtual StepTime time(const Scenario& layout) const = 0;
  // The same, or nullopt when the layout's tokens/s per GPU is certainly below `tokens_floor`
  // (a layout that slow cannot change the search's result); it must never skip a layout time()
  // would give no finite, positive speed. By default every layout is timed.
  virtual std::optional<StepTime> time_unless_slower(const Scenario& layout,
                                                     double /*tokens_floor*/) const {
    return time(layout);
  }
  // Whether time_unless_slower's verdict (skipped or timed) is, for one floor, the same for
  // layouts that differ only in their sharding (zero, FSDP, distributed optimizer): the search
  // then skips the rest of such a set once one of them is skipped, without asking again.
  virtual bool skips_regardless_of_sharding() const { return false; }
  // A timer for one search thread alone, which may keep state between calls (the step-time
  // model's StepTimeCache); nullptr to share this one. It must time every layout as this does.
  virtual std::unique_ptr<LayoutTimer> for_thread() const { return nullptr; }
};

// The ordering of candidates: more tokens/s per GPU first, then less peak memory, then the
// layout's fields (so that results never depend on thread timing).
bool better_candidate(const PlanCandidate& a, const PlanCandidate& b);
// The same trade-off: equal step time, tokens/s and peak device memory. The search keeps one
// candidate per trade-off and lists the others as its equivalents.
bool same_trade_off(const PlanCandidate& a, const PlanCandidate& b);
// Closest misses: less peak memory first, then the layout's fields.
bool closer_miss(const PlanCandidate& a, const PlanCandidate& b);

// The planner's conventions beyond validity, which keep one layout per distinct configuration:
// tp = 1 runs without sequence parallelism; pp = 1 runs 1F1B with vpp = 1 and an even split;
// every chunk holds at least one layer; a split whose chunk sizes equal an earlier allowed kind's
// is that kind; etp ≤ max_tp; where sharding cannot shard anything (one data rank, one expert
// data rank) only the first allowed sharding is kept; HYBRID_SHARD shards within a node's data
// ranks; FSDP NO_SHARD (= DDP) only when asked for. Plus the request's PlanSpace lists.
bool is_canonical(const PlanRequest& request, const PlanLayout& layout);

struct SearchResult {
  std::vector<PlanCandidate> top;  // best first, at most request.top_k
  std::array<std::optional<PlanCandidate>, kFamilies> family_best;
  std::array<std::optional<PlanCandidate>, kFamilies> family_miss;  // when no layout fits
  std::optional<PlanCandidate> closest_miss;                        // when nothing fits
  PlanStats stats;
  std::optional<SpaceCollector> space;  // when request.space_points > 0
  bool stopped = false;                 // request.should_stop() said so: the rest is partial
};

// Every canonical valid layout of `request` (gpus, max_tp, space) is decided; those with peak
// device bytes ≤ limit_bytes are timed and ranked.
// REQUIRES: request.gpus ≥ 1, max_tp ≥ 1, top_k ≥ 1, base.training.global_batch ≥ 1;
// `memory` was prepared from request.base.
SearchResult search_layouts(const PlanRequest& request, const FastMemoryModel& memory,
                            const LayoutTimer& timer, int64_t limit_bytes);

// Adds `part` (another thread's or another search's) to `total`: the top K, the families' best
// and closest misses, the collected space, the stats.
void merge_search(SearchResult& total, SearchResult& part, int top_k);
// Adds one search's counts to another's (not seconds or threads).
void add_stats(PlanStats& total, const PlanStats& part);
// Drops the misses that no longer matter: the closest when something fits, a family's when one
// of it fits.
void settle_misses(SearchResult& total);

}  // namespace vramplan
