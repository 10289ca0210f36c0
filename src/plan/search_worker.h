// The planner search's worker (planner_search.cc runs one per thread): the layouts of the
// branches it is given decided one by one, with its own top K, family bests and misses. Its fast
// path, which hoists each memory part out of the loops that do not change it, is
// search_branch.cc; search_worker.cc keeps the candidates and runs layouts outside the fast path.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "plan/activation_cache.h"
#include "plan/planner_search.h"
#include "plan/worst_rank.h"
#include "training/fast/narrow_peak.h"

namespace vramplan::plan_search {

using FamilySet = uint32_t;  // bit f: Family f

struct PipeOption {
  int64_t pp = 1, vpp = 1;
  PipelineSplit split;
  std::vector<Schedule> schedules;
  PipelineShape shape;
};

// Values of the Schedule and Recompute enums, for arrays indexed by them.
inline constexpr size_t kSchedules = static_cast<size_t>(Schedule::kGPipe) + 1;
inline constexpr size_t kRecomputes = static_cast<size_t>(Recompute::kSelectiveOp) + 1;

struct Branch {
  int64_t tp, cp, dp, ep, etp;
  size_t pipe;  // index into the pipe options
};

// Every field, in the order that breaks ties between candidates.
inline auto layout_key(const PlanLayout& l) {
  return std::make_tuple(
      l.tp, l.sequence_parallel, l.pp, l.vpp, static_cast<int>(l.schedule),
      static_cast<int>(l.split.kind), l.split.first_stage_layers, l.split.last_stage_layers, l.cp,
      l.ep, l.etp, l.dp, l.micro_batch, static_cast<int>(l.recompute), l.sharding.zero,
      static_cast<int>(l.sharding.fsdp), l.sharding.fsdp_shard_group,
      l.sharding.distributed_optimizer, static_cast<int>(l.offload.optimizer),
      static_cast<int>(l.offload.params), l.offload.optimizer_fraction, l.offload.activations);
}

// Adds `c` (with its own equivalents) to the kept candidate of the same trade-off, if any; the
// layout first by its fields stays the representative, so threads never change the result.
bool join_equivalent(std::vector<PlanCandidate>& kept, const PlanCandidate& c);

class Worker {
 public:
  Worker(const PlanRequest& r, const FastMemoryModel& memory, const LayoutTimer& timer,
         int64_t limit, const std::vector<PipeOption>& pipes);

  // Decides every layout of branch `b`.
  void run(const Branch& b);
  SearchResult& result() { return out_; }
  bool any_fit() const { return any_fit_; }

 private:
  // What run() knows of the layouts of one sharding (and those with its states) in one inner
  // loop: a miss that changes nothing, a finished peak, or a fit whose peak is not finished.
  enum class Outcome { kMissed, kPeak, kFitsUnfinished };
  struct Scratch {  // run()'s per-branch lists, kept between branches
    std::vector<RankParams> params = std::vector<RankParams>(kMaxRankGroups);  // by rank group
    std::vector<RankStates> states;    // by sharding, then rank group
    std::vector<NarrowStates> narrow;  // the same in 64 bits
    std::vector<char> states_narrow;   // by sharding: all its groups' states narrow
    std::vector<char> pruned;
    std::vector<size_t> same_as;
    // By sharding: its peak, or its worst rank group's bytes before finish, and which it is.
    std::vector<FastPeak> peaks;
    std::vector<RankBytes> worst;
    std::vector<Outcome> outcome;
    // Kept across the branches of one (tp, pipe, cp, dp): other_allocated reads neither ep nor
    // the sharding, so each branch of another ep (and the same etp) finds what an earlier one
    // computed (others_table).
    std::array<int64_t, 4> others_for{-1, -1, -1, -1};  // (tp, pipe, cp, dp)
    std::vector<int64_t> others_etp;                    // etp of each table
    std::vector<NarrowOther> others;                    // by table, then others_index
    std::vector<char> others_known;
    std::vector<RankAlive> alive;  // by micro-batch, schedule and rank group
    std::vector<char> alive_known;
  };
  struct Inner {  // the inner loops' option lists of one branch
    std::vector<bool> sps;
    std::vector<int64_t> mbs;
    std::vector<Recompute> rcs;
  };
  // The inner loops' lists of branch `b`: those of the last (tp, cp, dp) asked for, which its
  // branches of every pipe, ep and etp share (the micro-batches were 1.5% of the DeepSeek-V3
  // search when listed for each branch).
  const Inner& inner_for(const Branch& b);
  int64_t blocker(const PlanLayout& prototype, bool full_recompute_possible) const;
  // The table of what other_allocated gives each rank group of branch `b` (narrow_other), by
  // (sequence parallelism, micro-batch, recompute, schedule, group); unknown cells are marked 0 in
  // scratch_.others_known at the same offset. The alive layers (scratch_.alive) are kept with
  // them.
  NarrowOther* others_table(const Branch& b, const Inner& in, int groups);
  // The families (bit f: Family f) a layout belongs to among those that apply: fixed for a
  // branch's layouts of one recompute mode.
  FamilySet families_of(const PlanLayout& layout) const;
  // `families` = families_of(layout).
  void decide(PlanLayout& layout, const FastPeak& peak, FamilySet families);
  // decide() split for a layout known to fit, whose peak is needed only if a result may keep
  // it: counts it as fitting and returns its step time, or nullopt where it changes no result
  // (certainly too slow, or untimed); then keep_timed keeps it with its peak.
  std::optional<StepTime> time_fitting(PlanLayout& layout, FamilySet families);
  void keep_timed(const PlanLayout& layout, const FastPeak& peak, const StepTime& time,
                  FamilySet families);
  // Whether a layout of `prototype`'s families that misses the limit could still change a result:
  // the closest miss while nothing fits, a family's while none of it fits.
  bool misses_matter(FamilySet families) const;
  // The tokens/s per GPU a fitting layout must reach to change a result: the worst of the kept
  // top K and the best of each of its families; nullopt while any of them is missing or the
  // space of fitting layouts is collected (each layout is a point of it).
  // Kept per family set until a fitting layout is kept (keep_fit).
  std::optional<double> tokens_floor(FamilySet families);
  // A layout that misses the limit when misses_matter() is false: only counted.
  void count_unrecorded_miss() {
    ++out_.stats.evaluated;
    ++out_.stats.memory_computed;
  }
  void keep_fit(const PlanCandidate& c, FamilySet families);
  void keep_miss(const PlanCandidate& c, FamilySet families);
  bool probe_misses(PlanLayout& layout, const Inner& in, const PipeOption& pipe,
                    const ShardingChoice& mode, int64_t inner_count);
  void run_slow(const Branch& b, PlanLayout& layout, const Inner& in,
                const std::vector<ShardingChoice>& modes);

  const PlanRequest& r_;
  const FastMemoryModel& memory_;
  std::unique_ptr<LayoutTimer> own_timer_;
  const LayoutTimer& timer_;
  const bool skips_regardless_of_sharding_;
  const int64_t limit_;
  const int64_t host_limit_;  // a rank's share of the node's RAM; 0 = not checked
  const std::vector<PipeOption>& pipes_;
  ActivationCache activations_;
  Scratch scratch_;
  std::array<int64_t, 3> inner_of_{-1, -1, -1};  // the (tp, cp, dp) of inner_
  Inner inner_;
  Scenario scenario_;  // base, with the layout being timed written in
  SearchResult out_;
  std::array<bool, kFamilies> applies_ = {true, true, true, true, true, true};
  std::array<bool, kFamilies> family_fit_{};
  FamilySet fitted_families_ = 0;         // family_fit_ as bits
  std::optional<Wide> last_fitting_sum_;  // the last largest_fitting_sum, a guess for the next
  // The layouts run() decides in one pass of its inner loops differ only in their sharding: with
  // a timer that skips regardless of it, once one of them is skipped, so are the others while
  // the floor stays (no layout kept since, kept_). 0: no such set (run_slow, probes).
  uint64_t sharding_set_ = 0;
  uint64_t sharding_sets_ = 0;  // sets begun so far
  uint64_t skipped_set_ = 0;    // the set in which a layout was skipped, at kept_ = skipped_at_
  uint64_t skipped_at_ = 0;
  struct KnownFloor {
    uint64_t kept = ~uint64_t{0};  // kept_ when it was computed
    std::optional<double> floor;
  };
  std::array<KnownFloor, size_t{1} << kFamilies> known_floor_;  // by family set
  uint64_t kept_ = 0;                                           // fitting layouts kept so far
  bool any_fit_ = false;
};

}  // namespace vramplan::plan_search
