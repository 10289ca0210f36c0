// The fast path of a search worker: one branch's layouts, each memory part computed once per
// loop level that changes it (search_worker.h).
#include <algorithm>

#include "plan/search_space.h"
#include "plan/search_worker.h"
#include "plan/worst_rank.h"
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
  Inner in{sequence_parallel_for(r_, b.tp, b.cp), micro_batches_for(r_, b.dp), recomputes_for(r_)};
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
  // The per-branch lists live in the worker and are only overwritten: zeroing them for each of
  // tens of thousands of branches cost more than the loops below.
  Scratch& at = scratch_;
  if (at.states.size() < modes.size() * groups) at.states.resize(modes.size() * groups);
  auto states = [&](size_t k) { return at.states.data() + k * groups; };
  at.pruned.assign(modes.size(), 0);
  std::vector<char>& pruned = at.pruned;
  const bool full_possible =
      std::find(in.rcs.begin(), in.rcs.end(), Recompute::kFull) != in.rcs.end();
  const int64_t block = blocker(layout, full_possible);
  for (size_t k = 0; k < modes.size(); ++k) {
    Parallelism with_mode = par;
    with_mode.zero = modes[k].zero;
    with_mode.fsdp = modes[k].fsdp;
    with_mode.fsdp_shard_group = modes[k].fsdp_shard_group;
    with_mode.distributed_optimizer = modes[k].distributed_optimizer;
    memory_.states_bytes(shape, with_mode, states(k));
    // Activations only add to what the states alone need in some phase (states_floor).
    Wide lower = 0;
    for (int g = 0; g < groups; ++g) lower = std::max(lower, memory_.states_floor(states(k)[g]));
    const FastPeak bound = memory_.finish(lower, par);
    pruned[k] = bound.overflow || (bound.device_bytes > limit_ && bound.device_bytes > block);
    if (pruned[k]) {
      out_.stats.evaluated += inner_count;
      out_.stats.pruned += inner_count;
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
  std::vector<FastPeak>& peaks = at.peaks;
  peaks.resize(modes.size());
  // Once a miss can change nothing (misses_matter), a layout is decided as soon as one rank group
  // passes the largest sum that fits: the others' bytes are not needed. The group that passed
  // last is tried first.
  std::vector<char>& missed = at.missed;
  missed.assign(modes.size(), 0);
  int first_over = 0;
  std::array<std::array<Wide, 3>, 2> fitting_sums;  // by sp and schedule, found when needed
  std::array<std::array<bool, 3>, 2> fitting_sum_known{};
  std::array<RankBytes, kMaxRankGroups> ranks;

  std::array<Wide, kMaxRankGroups> other;
  std::array<Wide, kMaxRankGroups> reserved_only;
  std::array<Wide, kMaxRankGroups> kept_outputs;
  std::array<Wide, kMaxRankGroups> freed_loss;
  std::array<Wide, kMaxRankGroups> layer_freed;
  std::array<int64_t, kMaxRankGroups> layers_held;
  std::array<bool, kMaxRankGroups> other_known;
  for (bool sp : in.sps) {
    par.sequence_parallel = sp;
    layout.sequence_parallel = sp;
    for (int64_t mb : in.mbs) {
      layout.micro_batch = mb;
      const int64_t m = memory_.microbatches(par, mb);
      for (Recompute rc : in.rcs) {
        layout.recompute = rc;
        const FamilySet families = families_of(layout);
        const ActivationTerms& terms = activations_.terms(par, mb, rc);
        for (Schedule schedule : pipe.schedules) {
          par.schedule = schedule;
          layout.schedule = schedule;
          // A group's activations are computed when a peak first needs them (a layout decided
          // by one group over the limit needs no other group's).
          other_known.fill(false);
          auto ensure_other = [&](int g) {
            if (other_known[g]) return;
            other_known[g] = true;
            reserved_only[g] = kept_outputs[g] = freed_loss[g] = layer_freed[g] = 0;
            layers_held[g] = 0;
            other[g] = memory_.other_allocated(shape.group[g], terms, par, rc, m, &reserved_only[g],
                                               &kept_outputs[g], &freed_loss[g], &layer_freed[g],
                                               &layers_held[g]);
          };
          const bool quiet = !misses_matter(families);
          Wide fitting_sum = 0;
          if (quiet) {
            const size_t with_sp = sp ? 1 : 0, at = static_cast<size_t>(schedule);
            if (!fitting_sum_known[with_sp][at]) {
              fitting_sums[with_sp][at] =
                  largest_fitting_sum(memory_, par, limit_, last_fitting_sum_);
              last_fitting_sum_ = fitting_sums[with_sp][at];
              fitting_sum_known[with_sp][at] = true;
            }
            fitting_sum = fitting_sums[with_sp][at];
          }
          for (size_t k = 0; k < modes.size(); ++k) {
            if (pruned[k]) continue;
            if (same_as[k] == k) {
              missed[k] = 0;
              // The rank with the most device memory, as estimate() picks its peak stage (a
              // recompute working set hidden under the logits adds to reserved, not allocated).
              for (int i = 0, g = quiet ? first_over : 0; i < groups && !missed[k];
                   ++i, g = g + 1 < groups ? g + 1 : 0) {
                ensure_other(g);
                bool forward_backward = true;
                Wide hidden = 0;  // FSDP unit gradients under the freed logits: reserved only
                ranks[g].allocated = memory_.rank_peak(
                    states(k)[g], other[g], m, par, &forward_backward, kept_outputs[g],
                    freed_loss[g], &hidden, layer_freed[g], layers_held[g]);
                ranks[g].reserved_only = forward_backward ? reserved_only[g] + hidden : 0;
                if (quiet && ranks[g].allocated + ranks[g].reserved_only > fitting_sum) {
                  missed[k] = 1;
                  first_over = g;
                }
              }
              if (!missed[k]) peaks[k] = worst_rank_peak(memory_, par, ranks.data(), groups);
            }
            layout.sharding = modes[k];
            if (missed[same_as[k]])
              count_unrecorded_miss();
            else
              decide(layout, peaks[same_as[k]], families);
          }
        }
      }
    }
  }
}

}  // namespace vramplan::plan_search
