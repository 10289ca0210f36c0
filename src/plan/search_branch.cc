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
  std::vector<std::array<RankStates, kMaxRankGroups>> states(modes.size());
  std::vector<bool> pruned(modes.size(), false);
  const bool full_possible =
      std::find(in.rcs.begin(), in.rcs.end(), Recompute::kFull) != in.rcs.end();
  const int64_t block = blocker(layout, full_possible);
  for (size_t k = 0; k < modes.size(); ++k) {
    Parallelism with_mode = par;
    with_mode.zero = modes[k].zero;
    with_mode.fsdp = modes[k].fsdp;
    with_mode.fsdp_shard_group = modes[k].fsdp_shard_group;
    with_mode.distributed_optimizer = modes[k].distributed_optimizer;
    memory_.states_bytes(shape, with_mode, states[k].data());
    // Activations only add to what the states alone need in some phase (states_floor).
    Wide lower = 0;
    for (int g = 0; g < groups; ++g) lower = std::max(lower, memory_.states_floor(states[k][g]));
    const FastPeak bound = memory_.finish(lower, par);
    pruned[k] = bound.overflow || (bound.device_bytes > limit_ && bound.device_bytes > block);
    if (pruned[k]) {
      out_.stats.evaluated += inner_count;
      out_.stats.pruned += inner_count;
    }
  }
  if (std::find(pruned.begin(), pruned.end(), false) == pruned.end()) return;
  // Shardings whose states are the same on every rank group (ZeRO-1 and Megatron's distributed
  // optimizer, often) have the same peaks: each is computed once, for the first of them.
  std::vector<size_t> same_as(modes.size());
  for (size_t k = 0; k < modes.size(); ++k) {
    same_as[k] = k;
    for (size_t j = 0; j < k && same_as[k] == k; ++j)
      if (same_as[j] == j &&
          std::equal(states[k].begin(), states[k].begin() + groups, states[j].begin()))
        same_as[k] = j;
  }
  std::vector<FastPeak> peaks(modes.size());
  std::array<RankBytes, kMaxRankGroups> ranks;

  std::array<Wide, kMaxRankGroups> other;
  std::array<Wide, kMaxRankGroups> reserved_only;
  std::array<Wide, kMaxRankGroups> kept_outputs;
  std::array<Wide, kMaxRankGroups> freed_loss;
  std::array<Wide, kMaxRankGroups> layer_freed;
  std::array<int64_t, kMaxRankGroups> layers_held;
  for (bool sp : in.sps) {
    par.sequence_parallel = sp;
    layout.sequence_parallel = sp;
    for (int64_t mb : in.mbs) {
      layout.micro_batch = mb;
      const int64_t m = memory_.microbatches(par, mb);
      for (Recompute rc : in.rcs) {
        layout.recompute = rc;
        const ActivationTerms& terms = activations_.terms(par, mb, rc);
        for (Schedule schedule : pipe.schedules) {
          par.schedule = schedule;
          layout.schedule = schedule;
          for (int g = 0; g < groups; ++g) {
            reserved_only[g] = kept_outputs[g] = freed_loss[g] = layer_freed[g] = 0;
            layers_held[g] = 0;
            other[g] = memory_.other_allocated(shape.group[g], terms, par, rc, m, &reserved_only[g],
                                               &kept_outputs[g], &freed_loss[g], &layer_freed[g],
                                               &layers_held[g]);
          }
          for (size_t k = 0; k < modes.size(); ++k) {
            if (pruned[k]) continue;
            if (same_as[k] == k) {
              // The rank with the most device memory, as estimate() picks its peak stage (a
              // recompute working set hidden under the logits adds to reserved, not allocated).
              for (int g = 0; g < groups; ++g) {
                bool forward_backward = true;
                Wide hidden = 0;  // FSDP unit gradients under the freed logits: reserved only
                ranks[g].allocated = memory_.rank_peak(
                    states[k][g], other[g], m, par, &forward_backward, kept_outputs[g],
                    freed_loss[g], &hidden, layer_freed[g], layers_held[g]);
                ranks[g].reserved_only = forward_backward ? reserved_only[g] + hidden : 0;
              }
              peaks[k] = worst_rank_peak(memory_, par, ranks.data(), groups);
            }
            layout.sharding = modes[k];
            decide(layout, peaks[same_as[k]]);
          }
        }
      }
    }
  }
}

}  // namespace vramplan::plan_search
