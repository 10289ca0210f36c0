#include "plan/planner_search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <tuple>

#include "plan/search_space.h"
#include "training/model_states.h"
#include "training/pipeline.h"

namespace vramplan {
namespace {

using namespace plan_space;

constexpr int64_t kNoBound = std::numeric_limits<int64_t>::max();

// --- Search state -----------------------------------------------------------------------------

struct PipeOption {
  int64_t pp = 1, vpp = 1;
  PipelineSplit split;
  std::vector<Schedule> schedules;
  PipelineShape shape;
};

struct Branch {
  int64_t tp, cp, dp, ep, etp;
  size_t pipe;  // index into the pipe options
};

auto layout_key(const PlanLayout& l) {
  return std::make_tuple(
      l.tp, l.sequence_parallel, l.pp, l.vpp, static_cast<int>(l.schedule),
      static_cast<int>(l.split.kind), l.split.first_stage_layers, l.split.last_stage_layers, l.cp,
      l.ep, l.etp, l.dp, l.micro_batch, static_cast<int>(l.recompute), l.sharding.zero,
      static_cast<int>(l.sharding.fsdp), l.sharding.fsdp_shard_group,
      l.sharding.distributed_optimizer, static_cast<int>(l.offload.optimizer),
      static_cast<int>(l.offload.params), l.offload.optimizer_fraction, l.offload.activations);
}

// The node's RAM shared by the ranks it holds (perf/hardware.h fit_host).
int64_t host_limit_per_rank(const PlanRequest& r) {
  if (!(r.host_memory_gib > 0)) return 0;
  const double ranks = static_cast<double>(std::min<int64_t>(r.cluster.gpus_per_node, r.gpus));
  return static_cast<int64_t>(r.host_memory_gib * 1024.0 * 1024.0 * 1024.0 / std::max(1.0, ranks));
}

bool worse_for_heap(const PlanCandidate& a, const PlanCandidate& b) {
  return better_candidate(a, b);  // heap front = the worst kept
}

bool key_less(const PlanLayout& a, const PlanLayout& b) { return layout_key(a) < layout_key(b); }

// Adds `c` (with its own equivalents) to the kept candidate of the same trade-off, if any; the
// layout first by its fields stays the representative, so threads never change the result.
bool join_equivalent(std::vector<PlanCandidate>& kept, const PlanCandidate& c) {
  for (PlanCandidate& k : kept) {
    if (!same_trade_off(k, c)) continue;
    std::vector<PlanLayout> all = std::move(k.equivalents);
    all.push_back(k.layout);
    all.push_back(c.layout);
    all.insert(all.end(), c.equivalents.begin(), c.equivalents.end());
    std::sort(all.begin(), all.end(), key_less);
    all.erase(std::unique(all.begin(), all.end(),
                          [](const PlanLayout& a, const PlanLayout& b) {
                            return layout_key(a) == layout_key(b);
                          }),
              all.end());
    if (key_less(c.layout, k.layout)) {  // the representative's own numbers are c's
      k = c;
    }
    k.layout = all.front();
    k.equivalents.assign(all.begin() + 1, all.end());
    return true;
  }
  return false;
}

class Worker {
 public:
  Worker(const PlanRequest& r, const FastMemoryModel& memory, const LayoutTimer& timer,
         int64_t limit, const std::vector<PipeOption>& pipes)
      : r_(r),
        memory_(memory),
        own_timer_(timer.for_thread()),
        timer_(own_timer_ ? *own_timer_ : timer),
        limit_(limit),
        host_limit_(host_limit_per_rank(r)),
        pipes_(pipes),
        scenario_(r.base) {
    applies_[static_cast<int>(Family::kExpert)] = r.base.model.is_moe();
    if (r.space_points > 0) out_.space.emplace(limit, r.space_points);
  }

  void run(const Branch& b);
  SearchResult& result() { return out_; }
  bool any_fit() const { return any_fit_; }

 private:
  struct Inner {  // the inner loops' option lists of one branch
    std::vector<bool> sps;
    std::vector<int64_t> mbs;
    std::vector<Recompute> rcs;
  };
  int64_t blocker(const PlanLayout& prototype, bool full_recompute_possible) const;
  void decide(PlanLayout& layout, const FastPeak& peak);
  void keep_fit(const PlanCandidate& c);
  void keep_miss(const PlanCandidate& c);
  bool probe_misses(PlanLayout& layout, const Inner& in, const PipeOption& pipe,
                    const ShardingChoice& mode, int64_t inner_count);
  void run_slow(const Branch& b, PlanLayout& layout, const Inner& in,
                const std::vector<ShardingChoice>& modes);

  const PlanRequest& r_;
  const FastMemoryModel& memory_;
  std::unique_ptr<LayoutTimer> own_timer_;
  const LayoutTimer& timer_;
  const int64_t limit_;
  const int64_t host_limit_;  // a rank's share of the node's RAM; 0 = not checked
  const std::vector<PipeOption>& pipes_;
  Scenario scenario_;  // base, with the layout being timed written in
  SearchResult out_;
  std::array<bool, kFamilies> applies_ = {true, true, true, true, true, true};
  std::array<bool, kFamilies> family_fit_{};
  bool any_fit_ = false;
};

// The largest device-byte figure a closest miss could still need to improve on: a branch whose
// lower bound exceeds it (and the limit) cannot change any result.
int64_t Worker::blocker(const PlanLayout& prototype, bool full_recompute_possible) const {
  int64_t worst = any_fit_ ? -1 : (out_.closest_miss ? out_.closest_miss->device_bytes : kNoBound);
  for (int f = 0; f < kFamilies; ++f) {
    const bool member =
        in_family(prototype, static_cast<Family>(f)) ||
        (static_cast<Family>(f) == Family::kFullRecompute && full_recompute_possible);
    if (!member || !applies_[f] || family_fit_[f]) continue;
    worst = std::max(worst, out_.family_miss[f] ? out_.family_miss[f]->device_bytes : kNoBound);
  }
  return worst;
}

void Worker::keep_fit(const PlanCandidate& c) {
  std::vector<PlanCandidate>& top = out_.top;
  // A layout with the same time and memory as one kept joins it instead of taking a place:
  // the top K are K different trade-offs. It can only tie a kept one if it is not worse than
  // the worst kept, or ties that one.
  const bool full = static_cast<int>(top.size()) >= r_.top_k;
  if (!full || better_candidate(c, top.front()) || same_trade_off(c, top.front())) {
    if (join_equivalent(top, c)) {
      std::make_heap(top.begin(), top.end(), worse_for_heap);
    } else if (!full) {
      top.push_back(c);
      std::push_heap(top.begin(), top.end(), worse_for_heap);
    } else if (better_candidate(c, top.front())) {
      std::pop_heap(top.begin(), top.end(), worse_for_heap);
      top.back() = c;
      std::push_heap(top.begin(), top.end(), worse_for_heap);
    }
  }
  any_fit_ = true;
  for (int f = 0; f < kFamilies; ++f) {
    if (!applies_[f] || !in_family(c.layout, static_cast<Family>(f))) continue;
    family_fit_[f] = true;
    std::optional<PlanCandidate>& best = out_.family_best[f];
    if (!best || better_candidate(c, *best)) best = c;
  }
}

void Worker::keep_miss(const PlanCandidate& c) {
  if (!any_fit_ && (!out_.closest_miss || closer_miss(c, *out_.closest_miss)))
    out_.closest_miss = c;
  for (int f = 0; f < kFamilies; ++f) {
    if (!applies_[f] || family_fit_[f] || !in_family(c.layout, static_cast<Family>(f))) continue;
    std::optional<PlanCandidate>& miss = out_.family_miss[f];
    if (!miss || closer_miss(c, *miss)) miss = c;
  }
}

void Worker::decide(PlanLayout& layout, const FastPeak& peak) {
  ++out_.stats.evaluated;
  ++out_.stats.memory_computed;
  out_.stats.memory_fallback += peak.fallback;
  if (peak.overflow) return;  // estimate() rejects it: beyond any GPU
  PlanCandidate c;
  c.allocated_bytes = peak.allocated_bytes;
  c.reserved_bytes = peak.reserved_bytes;
  c.device_bytes = peak.device_bytes;
  c.host_bytes = peak.host_bytes;
  if (peak.device_bytes > limit_) {
    c.layout = layout;
    keep_miss(c);
    return;
  }
  if (host_limit_ > 0 && c.host_bytes > host_limit_) {
    ++out_.stats.host_over;
    return;
  }
  ++out_.stats.fitting;
  apply_layout(layout, scenario_);
  c.time = timer_.time(scenario_);
  if (!std::isfinite(c.time.tokens_per_s_per_gpu) || c.time.tokens_per_s_per_gpu <= 0) {
    ++out_.stats.untimed;
    return;
  }
  c.layout = layout;
  keep_fit(c);
  if (out_.space) out_.space->add(c);
}

// With offload the search runs on estimate() alone (run_slow), so each sharding is first probed
// at its least memory: full recomputation, sequence parallelism where offered, each schedule,
// micro-batch 1 (GPipe: every micro-batch, since it holds all of a step's microbatches whatever
// their size). Memory only grows with the micro-batch outside GPipe, with less recomputation
// (full keeps each layer's input; its recompute working set is at most one layer's saved
// tensors, which none and selective keep for every layer) and without sequence parallelism, so
// when every probe misses, no layout of the sharding fits: the probes are decided as misses and
// the rest counted as pruned.
bool Worker::probe_misses(PlanLayout& layout, const Inner& in, const PipeOption& pipe,
                          const ShardingChoice& mode, int64_t inner_count) {
  const bool full = std::find(in.rcs.begin(), in.rcs.end(), Recompute::kFull) != in.rcs.end();
  if (!full || in.mbs.empty() || in.sps.empty()) return false;
  std::vector<std::pair<PlanLayout, FastPeak>> probes;
  for (Schedule schedule : pipe.schedules) {
    const size_t mbs = schedule == Schedule::kGPipe ? in.mbs.size() : 1;
    for (size_t i = 0; i < mbs; ++i) {
      layout.sequence_parallel = in.sps.front();  // true where offered (sequence_parallel_for)
      layout.micro_batch = in.mbs[i];
      layout.recompute = Recompute::kFull;
      layout.schedule = schedule;
      layout.sharding = mode;
      apply_layout(layout, scenario_);
      const FastPeak peak = memory_.evaluate(scenario_);
      if (peak.overflow || peak.device_bytes <= limit_) return false;
      probes.emplace_back(layout, peak);
    }
  }
  for (auto& [probe, peak] : probes) decide(probe, peak);
  const int64_t rest = inner_count - static_cast<int64_t>(probes.size());
  out_.stats.evaluated += rest;
  out_.stats.pruned += rest;
  return true;
}

void Worker::run_slow(const Branch& b, PlanLayout& layout, const Inner& in,
                      const std::vector<ShardingChoice>& modes) {
  const PipeOption& pipe = pipes_[b.pipe];
  std::vector<ShardingChoice> open;
  const int64_t per_mode =
      static_cast<int64_t>(in.sps.size() * in.mbs.size() * in.rcs.size() * pipe.schedules.size());
  for (const ShardingChoice& mode : modes)
    if (!r_.base.offload.any() || !probe_misses(layout, in, pipe, mode, per_mode))
      open.push_back(mode);
  if (open.empty()) return;
  // Micro-batches ascend (micro_batches_for). Outside GPipe, the activations a rank holds grow
  // with the micro-batch (1F1B and interleaved keep min(m, in-flight) microbatches of mb
  // sequences: non-decreasing in mb) and nothing else shrinks, so a combination that misses at
  // one micro-batch misses at every larger one: decided without its peak.
  const size_t combos = in.rcs.size() * pipe.schedules.size() * open.size();
  for (bool sp : in.sps) {
    std::vector<bool> missed(combos, false);
    for (int64_t mb : in.mbs) {
      size_t combo = 0;
      for (Recompute rc : in.rcs)
        for (Schedule schedule : pipe.schedules)
          for (const ShardingChoice& mode : open) {
            const size_t at = combo++;
            if (missed[at]) {
              ++out_.stats.evaluated;
              ++out_.stats.pruned;
              continue;
            }
            layout.sequence_parallel = sp;
            layout.micro_batch = mb;
            layout.recompute = rc;
            layout.schedule = schedule;
            layout.sharding = mode;
            apply_layout(layout, scenario_);
            const FastPeak peak = memory_.evaluate(scenario_);
            decide(layout, peak);
            if (!peak.overflow && peak.device_bytes > limit_ && schedule != Schedule::kGPipe)
              missed[at] = true;
          }
    }
  }
}

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
        const ActivationTerms terms = memory_.activations(par, mb, rc);
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
            // The rank with the most device memory, as estimate() picks its peak stage (a
            // recompute working set hidden under the logits adds to reserved, not allocated).
            FastPeak worst;
            for (int g = 0; g < groups && !worst.overflow; ++g) {
              bool forward_backward = true;
              Wide hidden = 0;  // FSDP unit gradients under the freed logits: reserved only
              const Wide allocated = memory_.rank_peak(
                  states[k][g], other[g], m, par, &forward_backward, kept_outputs[g], freed_loss[g],
                  &hidden, layer_freed[g], layers_held[g]);
              const FastPeak rank =
                  memory_.finish(allocated, par, forward_backward ? reserved_only[g] + hidden : 0);
              if (rank.overflow || rank.device_bytes > worst.device_bytes ||
                  (rank.device_bytes == worst.device_bytes &&
                   rank.allocated_bytes > worst.allocated_bytes))
                worst = rank;
            }
            layout.sharding = modes[k];
            decide(layout, worst);
          }
        }
      }
    }
  }
}

std::vector<PipeOption> pipe_options(const PlanRequest& r, const FastMemoryModel& memory) {
  std::vector<PipeOption> out;
  const int64_t layers = r.base.model.num_layers;
  for (int64_t pp : divisors(r.gpus)) {
    if (pp > kMaxDegree || !allowed(r.space.pp, pp)) continue;
    for (int64_t vpp = 1; vpp <= std::max<int64_t>(1, layers / pp); ++vpp) {
      if (vpp > 1 && pp == 1) break;
      if (!allowed(r.space.vpp, vpp)) continue;
      const std::vector<Schedule> schedules = schedules_for(r, pp, vpp);
      if (schedules.empty()) continue;
      for (const PipelineSplit& split : splits_for(r, pp, vpp)) {
        PipeOption o{pp, vpp, split, schedules, {}};
        Parallelism p;
        p.pp = pp;
        p.vpp = vpp;
        set_split(split, p);
        o.shape = memory.shape(p);
        out.push_back(std::move(o));
      }
    }
  }
  return out;
}

std::vector<Branch> branches_of(const PlanRequest& r, const std::vector<PipeOption>& pipes) {
  std::vector<Branch> out;
  const ModelConfig& m = r.base.model;
  const int64_t seq = r.base.training.seq_len;
  std::vector<int64_t> eps = {1}, etps = {1};
  if (m.is_moe()) {
    eps = divisors(m.moe.num_experts);
    etps.clear();
    for (int64_t etp : divisors(m.moe.expert_ffn))
      if (etp <= max_tp_of(r)) etps.push_back(etp);
  }
  for (int64_t tp : tps_for(r)) {
    for (size_t pi = 0; pi < pipes.size(); ++pi) {
      const int64_t pp = pipes[pi].pp;
      if ((r.gpus / tp) % pp != 0) continue;
      for (int64_t cp : divisors(r.gpus / (tp * pp))) {
        if (cp > kMaxDegree || !allowed(r.space.cp, cp) || !cp_divides_sequence(seq, cp)) continue;
        const int64_t dp = r.gpus / (tp * pp * cp);
        if (dp > kMaxDegree || !allowed(r.space.dp, dp)) continue;
        for (int64_t ep : eps) {
          if (ep > kMaxDegree || !allowed(r.space.ep, ep)) continue;
          for (int64_t etp : etps) {
            if (etp > kMaxDegree || !allowed(r.space.etp, etp)) continue;
            if (!experts_fit(m, tp, cp, dp, ep, etp)) continue;
            out.push_back({tp, cp, dp, ep, etp, pi});
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

void merge_search(SearchResult& total, SearchResult& part, int top_k) {
  for (const PlanCandidate& c : part.top)
    if (!join_equivalent(total.top, c)) total.top.push_back(c);
  std::sort(total.top.begin(), total.top.end(), better_candidate);
  if (static_cast<int>(total.top.size()) > top_k) total.top.resize(top_k);
  for (int f = 0; f < kFamilies; ++f) {
    if (part.family_best[f] &&
        (!total.family_best[f] || better_candidate(*part.family_best[f], *total.family_best[f])))
      total.family_best[f] = part.family_best[f];
    if (part.family_miss[f] &&
        (!total.family_miss[f] || closer_miss(*part.family_miss[f], *total.family_miss[f])))
      total.family_miss[f] = part.family_miss[f];
  }
  if (part.closest_miss &&
      (!total.closest_miss || closer_miss(*part.closest_miss, *total.closest_miss)))
    total.closest_miss = part.closest_miss;
  if (part.space && total.space)
    total.space->merge(*part.space);
  else if (part.space)
    total.space = std::move(part.space);
  add_stats(total.stats, part.stats);
}

void add_stats(PlanStats& total, const PlanStats& part) {
  total.evaluated += part.evaluated;
  total.memory_computed += part.memory_computed;
  total.memory_fallback += part.memory_fallback;
  total.pruned += part.pruned;
  total.fitting += part.fitting;
  total.untimed += part.untimed;
  total.host_over += part.host_over;
}

void settle_misses(SearchResult& total) {
  // A closest miss matters only when nothing fits; a family's only when none of it fits.
  if (!total.top.empty()) total.closest_miss.reset();
  for (int f = 0; f < kFamilies; ++f)
    if (total.family_best[f]) total.family_miss[f].reset();
}

bool better_candidate(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.time.tokens_per_s_per_gpu != b.time.tokens_per_s_per_gpu)
    return a.time.tokens_per_s_per_gpu > b.time.tokens_per_s_per_gpu;
  if (a.device_bytes != b.device_bytes) return a.device_bytes < b.device_bytes;
  return layout_key(a.layout) < layout_key(b.layout);
}

bool same_trade_off(const PlanCandidate& a, const PlanCandidate& b) {
  return a.time.tokens_per_s_per_gpu == b.time.tokens_per_s_per_gpu &&
         a.time.step_time_s == b.time.step_time_s && a.device_bytes == b.device_bytes;
}

bool closer_miss(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.device_bytes != b.device_bytes) return a.device_bytes < b.device_bytes;
  return layout_key(a.layout) < layout_key(b.layout);
}

SearchResult search_layouts(const PlanRequest& r, const FastMemoryModel& memory,
                            const LayoutTimer& timer, int64_t limit_bytes) {
  const std::vector<PipeOption> pipes = pipe_options(r, memory);
  const std::vector<Branch> branches = branches_of(r, pipes);
  int threads = r.threads > 0 ? r.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp<int>(threads, 1, std::max<int>(1, static_cast<int>(branches.size())));
  std::vector<Worker> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) workers.emplace_back(r, memory, timer, limit_bytes, pipes);
  std::atomic<size_t> next{0};
  std::atomic<bool> stopped{false};
  auto work = [&](Worker& w) {
    for (size_t i = next++; i < branches.size(); i = next++) {
      if (stopped.load(std::memory_order_relaxed)) return;
      if (r.should_stop && r.should_stop()) {
        stopped = true;
        return;
      }
      w.run(branches[i]);
    }
  };
  if (threads == 1) {
    work(workers[0]);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, std::ref(workers[t]));
    for (std::thread& th : pool) th.join();
  }
  SearchResult total;
  for (Worker& w : workers) merge_search(total, w.result(), r.top_k);
  settle_misses(total);
  total.stats.threads = threads;
  total.stopped = stopped;
  return total;
}

}  // namespace vramplan
