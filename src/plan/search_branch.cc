// The fast path of a search worker: one branch's layouts, each memory part computed once per
// loop level that changes it (search_worker.h).
#include <algorithm>
#include <limits>
#include <optional>

#include "plan/search_space.h"
#include "plan/search_worker.h"
#include "plan/worst_rank.h"
#include "training/fast/narrow_peak.h"
#include "training/model_states.h"
#include "training/pipeline.h"

namespace vramplan::plan_search {

using namespace plan_space;

void Worker::run(const Branch& b) {
  const PipeOption& pipe = pipes_[b.pipe];
  PlanLayout layout;
  layout.tp = b.tp;
  layout.pp = pipe.pp;
  layout.vpp = pipe.vpp;
  layout.split = pipe.split;
  layout.cp = b.cp;
  layout.dp = b.dp;
  layout.ep = b.ep;
  layout.etp = b.etp;
  layout.offload = r_.base.offload;
  const std::vector<ShardingChoice> modes = shardings_for(r_, b.tp, b.cp, b.dp, b.ep, b.etp);
  const Inner& in = inner_for(b);
  const int64_t inner_count =
      static_cast<int64_t>(in.sps.size() * in.mbs.size() * in.rcs.size() * pipe.schedules.size());
  if (inner_count == 0 || modes.empty()) return;
  if (!memory_.fast() || !pipe.shape.fast) {
    run_slow(b, layout, in, modes);
    return;
  }

  // Model states per sharding and rank group: fixed for the whole branch.
  Parallelism par = scenario_.parallel;
  apply_layout(layout, scenario_);
  par = scenario_.parallel;
  const PipelineShape& shape = pipe.shape;
  const int groups = shape.groups;
  const size_t cells = modes.size() * static_cast<size_t>(groups);
  // The per-branch lists live in the worker and are only overwritten: zeroing them for each of
  // tens of thousands of branches cost more than the loops below.
  Scratch& at = scratch_;
  if (at.states.size() < cells) {
    at.states.resize(cells);
    at.narrow.resize(cells);
  }
  auto states = [&](size_t k) { return at.states.data() + k * groups; };
  at.pruned.assign(modes.size(), 0);
  at.states_narrow.resize(modes.size());
  std::vector<char>& pruned = at.pruned;
  const bool full_possible =
      std::find(in.rcs.begin(), in.rcs.end(), Recompute::kFull) != in.rcs.end();
  const int64_t block = blocker(layout, full_possible);
  // The parameters on each group's ranks are the same for every sharding.
  memory_.params_of(shape, par, at.params.data());
  for (size_t k = 0; k < modes.size(); ++k) {
    Parallelism with_mode = par;
    with_mode.zero = modes[k].zero;
    with_mode.fsdp = modes[k].fsdp;
    with_mode.fsdp_shard_group = modes[k].fsdp_shard_group;
    with_mode.distributed_optimizer = modes[k].distributed_optimizer;
    memory_.states_bytes(shape, at.params.data(), with_mode, states(k));
    // Activations only add to what the states alone need in some phase (states_floor).
    Wide lower = 0;
    for (int g = 0; g < groups; ++g) lower = std::max(lower, memory_.states_floor(states(k)[g]));
    const FastPeak bound = memory_.finish(lower, par);
    pruned[k] = bound.overflow || (bound.device_bytes > limit_ && bound.device_bytes > block);
    if (pruned[k]) {
      out_.stats.evaluated += inner_count;
      out_.stats.pruned += inner_count;
      continue;
    }
    at.states_narrow[k] = 1;
    for (int g = 0; g < groups; ++g) {
      at.narrow[k * groups + g] = narrow_states(states(k)[g]);
      at.states_narrow[k] = at.states_narrow[k] && at.narrow[k * groups + g].narrow;
    }
  }
  if (std::find(pruned.begin(), pruned.end(), 0) == pruned.end()) return;
  // Shardings whose states are the same on every rank group (ZeRO-1 and Megatron's distributed
  // optimizer, often) have the same peaks: each is computed once, for the first of them.
  std::vector<size_t>& same_as = at.same_as;
  same_as.resize(modes.size());
  for (size_t k = 0; k < modes.size(); ++k) {
    same_as[k] = k;
    for (size_t j = 0; j < k && same_as[k] == k; ++j)
      if (same_as[j] == j && std::equal(states(k), states(k) + groups, states(j))) same_as[k] = j;
  }
  at.peaks.resize(modes.size());
  at.worst.resize(modes.size());
  at.outcome.resize(modes.size());
  NarrowOther* const others = others_table(b, in, groups);
  char* const others_known = at.others_known.data() + (others - at.others.data());
  // A layout's families depend on its recompute mode alone within a branch.
  std::array<FamilySet, kRecomputes> families_by_recompute{};
  for (Recompute rc : in.rcs) {
    layout.recompute = rc;
    families_by_recompute[static_cast<size_t>(rc)] = families_of(layout);
  }
  // Device bytes grow strictly with a rank's allocated + reserved-only sum (worst_rank.h): a
  // layout fits when every rank group's sum is within the largest that fits. Once a miss can
  // change nothing (misses_matter), a layout is decided as soon as one rank group passes it:
  // the others' bytes are not needed. The group that passed last is tried first.
  const bool sums_decide = sums_order_peaks(memory_.base().overheads);
  int first_over = 0;
  std::array<std::array<Wide, kSchedules>, 2> fitting_sums;  // by sp and schedule, when needed
  std::array<std::array<bool, kSchedules>, 2> fitting_sum_known{};
  std::array<RankBytes, kMaxRankGroups> ranks;

  std::array<Wide, kMaxRankGroups> other;
  std::array<Wide, kMaxRankGroups> reserved_only;
  std::array<Wide, kMaxRankGroups> kept_outputs;
  std::array<Wide, kMaxRankGroups> freed_loss;
  std::array<Wide, kMaxRankGroups> layer_freed;
  std::array<int64_t, kMaxRankGroups> layers_held;
  std::array<bool, kMaxRankGroups> other_known;
  for (size_t sp_index = 0; sp_index < in.sps.size(); ++sp_index) {
    const bool sp = in.sps[sp_index];
    par.sequence_parallel = sp;
    layout.sequence_parallel = sp;
    for (size_t mb_index = 0; mb_index < in.mbs.size(); ++mb_index) {
      const int64_t mb = in.mbs[mb_index];
      layout.micro_batch = mb;
      const int64_t m = memory_.microbatches(par, mb);
      for (Recompute rc : in.rcs) {
        layout.recompute = rc;
        const FamilySet families = families_by_recompute[static_cast<size_t>(rc)];
        // Looked up when a group's activations are first computed: those of the branches of
        // another ep are often all known.
        const ActivationTerms* terms = nullptr;
        auto terms_of_loop = [&]() -> const ActivationTerms& {
          if (!terms) terms = &activations_.terms(par, mb, rc);
          return *terms;
        };
        for (Schedule schedule : pipe.schedules) {
          par.schedule = schedule;
          layout.schedule = schedule;
          sharding_set_ = ++sharding_sets_;  // the layouts below differ only in their sharding
          const PeakPhase phase = peak_phase(memory_.base().conventions, par, m);
          const size_t alive_row = (mb_index * kSchedules + static_cast<size_t>(schedule)) * groups;
          const size_t others_row =
              ((sp_index * in.mbs.size() + mb_index) * kRecomputes + static_cast<size_t>(rc)) *
                  kSchedules * groups +
              static_cast<size_t>(schedule) * groups;
          auto alive_of = [&](int g) -> const RankAlive& {
            RankAlive& alive = at.alive[alive_row + g];
            if (!at.alive_known[alive_row + g]) {
              alive = memory_.alive(shape.group[g], par, m);
              at.alive_known[alive_row + g] = 1;
            }
            return alive;
          };
          // A group's activations are computed when a peak first needs them (a layout decided
          // by one group over the limit needs no other group's).
          auto narrow_other_of = [&](int g) -> const NarrowOther& {
            NarrowOther& known = others[others_row + g];
            if (!others_known[others_row + g]) {
              others_known[others_row + g] = 1;
              Wide reserved = 0, kept = 0, freed = 0, layer = 0;
              int64_t held = 0;
              const Wide bytes =
                  memory_.other_allocated(shape.group[g], alive_of(g), terms_of_loop(), par, rc, m,
                                          &reserved, &kept, &freed, &layer, &held);
              known = narrow_other(bytes, reserved, kept, freed, layer, held);
            }
            return known;
          };
          // The same in 128 bits, for decide_wide.
          other_known.fill(false);
          auto ensure_other = [&](int g) {
            if (other_known[g]) return;
            other_known[g] = true;
            reserved_only[g] = kept_outputs[g] = freed_loss[g] = layer_freed[g] = 0;
            layers_held[g] = 0;
            other[g] = memory_.other_allocated(shape.group[g], alive_of(g), terms_of_loop(), par,
                                               rc, m, &reserved_only[g], &kept_outputs[g],
                                               &freed_loss[g], &layer_freed[g], &layers_held[g]);
          };
          const bool quiet = !misses_matter(families);
          const size_t with_sp = sp ? 1 : 0, at_schedule = static_cast<size_t>(schedule);
          if (!fitting_sum_known[with_sp][at_schedule]) {
            fitting_sums[with_sp][at_schedule] =
                largest_fitting_sum(memory_, par, limit_, last_fitting_sum_);
            last_fitting_sum_ = fitting_sums[with_sp][at_schedule];
            fitting_sum_known[with_sp][at_schedule] = true;
          }
          const Wide fitting_sum = fitting_sums[with_sp][at_schedule];
          // At least -1; every narrow sum is below 2^62.
          const int64_t narrow_fitting_sum = static_cast<int64_t>(
              std::min<Wide>(fitting_sum, std::numeric_limits<int64_t>::max()));
          // The rank with the most device memory, as estimate() picks its peak stage (a
          // recompute working set hidden under the logits adds to reserved, not allocated).
          // Of equal sums and allocated bytes, any gives the same peak, so the order the groups
          // are visited in does not matter.
          // In 64 bits (narrow_peak.h), where every input is narrow and the worst sum alone
          // gives the peak (sums_decide, none negative); nullopt: decide_wide decides.
          auto decide_narrow = [&](size_t k) -> std::optional<Outcome> {
            int64_t worst_sum = 0, worst_allocated = 0;
            for (int i = 0, g = quiet ? first_over : 0; i < groups;
                 ++i, g = g + 1 < groups ? g + 1 : 0) {
              const NarrowOther& other_of_group = narrow_other_of(g);
              if (!other_of_group.narrow) return std::nullopt;
              const NarrowPeak rank =
                  narrow_rank_peak(at.narrow[k * groups + g], other_of_group, phase);
              const int64_t sum = rank.allocated + rank.reserved_only;
              if (quiet && sum > narrow_fitting_sum) {
                first_over = g;
                return Outcome::kMissed;
              }
              if (rank.allocated < 0 || rank.reserved_only < 0) return std::nullopt;
              if (i == 0 || sum > worst_sum ||
                  (sum == worst_sum && rank.allocated > worst_allocated)) {
                worst_sum = sum;
                worst_allocated = rank.allocated;
              }
            }
            RankBytes& worst = at.worst[k];
            worst = {worst_allocated, worst_sum - worst_allocated};
            if (worst_sum <= narrow_fitting_sum) return Outcome::kFitsUnfinished;
            at.peaks[k] = memory_.finish(worst.allocated, par, worst.reserved_only);
            return Outcome::kPeak;
          };
          // The same in 128 bits, for any inputs and overheads.
          auto decide_wide = [&](size_t k) {
            bool ordered = sums_decide;  // the worst sum alone gives the peak
            RankBytes& worst = at.worst[k];
            Wide worst_sum = 0;
            for (int i = 0, g = quiet ? first_over : 0; i < groups;
                 ++i, g = g + 1 < groups ? g + 1 : 0) {
              ensure_other(g);
              bool forward_backward = true;
              Wide hidden = 0;  // FSDP unit gradients under the freed logits: reserved only
              RankBytes& rank = ranks[g];
              rank.allocated = memory_.rank_peak(states(k)[g], other[g], m, par, &forward_backward,
                                                 kept_outputs[g], freed_loss[g], &hidden,
                                                 layer_freed[g], layers_held[g]);
              rank.reserved_only = forward_backward ? reserved_only[g] + hidden : 0;
              const Wide sum = rank.allocated + rank.reserved_only;
              if (quiet && sum > fitting_sum) {
                first_over = g;
                return Outcome::kMissed;
              }
              ordered = ordered && rank.allocated >= 0 && rank.reserved_only >= 0;
              if (i == 0 || sum > worst_sum ||
                  (sum == worst_sum && rank.allocated > worst.allocated)) {
                worst = rank;
                worst_sum = sum;
              }
            }
            if (ordered && worst_sum <= fitting_sum) return Outcome::kFitsUnfinished;
            at.peaks[k] = ordered ? memory_.finish(worst.allocated, par, worst.reserved_only)
                                  : worst_rank_peak(memory_, par, ranks.data(), groups);
            return Outcome::kPeak;
          };
          const bool narrow_phase = sums_decide && phase.narrow;
          for (size_t k = 0; k < modes.size(); ++k) {
            if (pruned[k]) continue;
            if (same_as[k] == k) {
              std::optional<Outcome> outcome;
              if (narrow_phase && at.states_narrow[k]) outcome = decide_narrow(k);
              at.outcome[k] = outcome ? *outcome : decide_wide(k);
            }
            const size_t first = same_as[k];
            switch (at.outcome[first]) {
              case Outcome::kMissed:
                count_unrecorded_miss();
                break;
              case Outcome::kPeak:
                layout.sharding = modes[k];
                decide(layout, at.peaks[first], families);
                break;
              case Outcome::kFitsUnfinished:
                // It fits: its peak is finished only if a result may keep it.
                layout.sharding = modes[k];
                ++out_.stats.evaluated;
                ++out_.stats.memory_computed;
                if (const std::optional<StepTime> time = time_fitting(layout, families)) {
                  at.peaks[first] =
                      memory_.finish(at.worst[first].allocated, par, at.worst[first].reserved_only);
                  at.outcome[first] = Outcome::kPeak;
                  keep_timed(layout, at.peaks[first], *time, families);
                }
                break;
            }
          }
        }
      }
    }
  }
  sharding_set_ = 0;
}

}  // namespace vramplan::plan_search
