#include "plan/search_worker.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plan/search_space.h"

namespace vramplan::plan_search {
namespace {

using namespace plan_space;

constexpr int64_t kNoBound = std::numeric_limits<int64_t>::max();

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

}  // namespace

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

Worker::Worker(const PlanRequest& r, const FastMemoryModel& memory, const LayoutTimer& timer,
               int64_t limit, const std::vector<PipeOption>& pipes)
    : r_(r),
      memory_(memory),
      own_timer_(timer.for_thread()),
      timer_(own_timer_ ? *own_timer_ : timer),
      skips_regardless_of_sharding_(timer_.skips_regardless_of_sharding()),
      limit_(limit),
      host_limit_(host_limit_per_rank(r)),
      pipes_(pipes),
      activations_(memory),
      scenario_(r.base) {
  applies_[static_cast<int>(Family::kExpert)] = r.base.model.is_moe();
  if (r.space_points > 0) out_.space.emplace(limit, r.space_points);
}

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

const Worker::Inner& Worker::inner_for(const Branch& b) {
  const std::array<int64_t, 3> key = {b.tp, b.cp, b.dp};
  if (inner_of_ != key) {
    inner_of_ = key;
    inner_ = {sequence_parallel_for(r_, b.tp, b.cp), micro_batches_for(r_, b.dp),
              recomputes_for(r_)};
  }
  return inner_;
}

NarrowOther* Worker::others_table(const Branch& b, const Inner& in, int groups) {
  Scratch& at = scratch_;
  // The option lists of a (tp, pipe, cp, dp) are the same in each of its branches.
  const size_t cells = in.sps.size() * in.mbs.size() * kRecomputes * kSchedules * groups;
  const std::array<int64_t, 4> key = {b.tp, static_cast<int64_t>(b.pipe), b.cp, b.dp};
  if (at.others_for != key) {
    at.others_for = key;
    at.others_etp.clear();
    at.others_known.clear();
    const size_t alive_cells = in.mbs.size() * kSchedules * groups;
    if (at.alive.size() < alive_cells) at.alive.resize(alive_cells);
    at.alive_known.assign(alive_cells, 0);
  }
  size_t table = 0;
  while (table < at.others_etp.size() && at.others_etp[table] != b.etp) ++table;
  if (table == at.others_etp.size()) {
    at.others_etp.push_back(b.etp);
    at.others_known.resize(at.others_etp.size() * cells, 0);
    if (at.others.size() < at.others_known.size()) at.others.resize(at.others_known.size());
  }
  return at.others.data() + table * cells;
}

FamilySet Worker::families_of(const PlanLayout& layout) const {
  FamilySet set = 0;
  for (int f = 0; f < kFamilies; ++f)
    if (applies_[f] && in_family(layout, static_cast<Family>(f))) set |= FamilySet{1} << f;
  return set;
}

void Worker::keep_fit(const PlanCandidate& c, FamilySet families) {
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
  ++kept_;
  any_fit_ = true;
  fitted_families_ |= families;
  for (int f = 0; f < kFamilies; ++f) {
    if (!(families >> f & 1)) continue;
    family_fit_[f] = true;
    std::optional<PlanCandidate>& best = out_.family_best[f];
    if (!best || better_candidate(c, *best)) best = c;
  }
}

std::optional<double> Worker::tokens_floor(FamilySet families) {
  // It changes only when the top K or a family's best does, which only keep_fit changes.
  KnownFloor& known = known_floor_[families];
  if (known.kept == kept_) return known.floor;
  known.kept = kept_;
  known.floor = std::nullopt;
  if (out_.space || static_cast<int>(out_.top.size()) < r_.top_k) return std::nullopt;
  double floor = out_.top.front().time.tokens_per_s_per_gpu;  // the worst kept
  for (int f = 0; f < kFamilies; ++f) {
    if (!(families >> f & 1)) continue;
    const std::optional<PlanCandidate>& best = out_.family_best[f];
    if (!best) return std::nullopt;
    floor = std::min(floor, best->time.tokens_per_s_per_gpu);
  }
  known.floor = floor;
  return floor;
}

bool Worker::misses_matter(FamilySet families) const {
  return !any_fit_ || (families & ~fitted_families_) != 0;
}

void Worker::keep_miss(const PlanCandidate& c, FamilySet families) {
  if (!any_fit_ && (!out_.closest_miss || closer_miss(c, *out_.closest_miss)))
    out_.closest_miss = c;
  for (int f = 0; f < kFamilies; ++f) {
    if (!(families >> f & 1) || family_fit_[f]) continue;
    std::optional<PlanCandidate>& miss = out_.family_miss[f];
    if (!miss || closer_miss(c, *miss)) miss = c;
  }
}

void Worker::decide(PlanLayout& layout, const FastPeak& peak, FamilySet families) {
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
    keep_miss(c, families);
    return;
  }
  if (host_limit_ > 0 && c.host_bytes > host_limit_) {
    ++out_.stats.host_over;
    return;
  }
  if (const std::optional<StepTime> time = time_fitting(layout, families))
    keep_timed(layout, peak, *time, families);
}

std::optional<StepTime> Worker::time_fitting(PlanLayout& layout, FamilySet families) {
  ++out_.stats.fitting;
  const std::optional<double> floor = tokens_floor(families);
  // Another sharding of the same layout was skipped under the same floor.
  if (floor && sharding_set_ != 0 && skipped_set_ == sharding_set_ && skipped_at_ == kept_)
    return std::nullopt;
  apply_layout(layout, scenario_);
  StepTime time;
  if (floor) {
    std::optional<StepTime> timed = timer_.time_unless_slower(scenario_, *floor);
    // Slower than every candidate it could displace: it changes nothing. (It fits, but the
    // flags a fit sets are set already: a kept top and each of its families' best exist.)
    if (!timed) {
      if (skips_regardless_of_sharding_) {
        skipped_set_ = sharding_set_;
        skipped_at_ = kept_;
      }
      return std::nullopt;
    }
    time = *timed;
  } else {
    time = timer_.time(scenario_);
  }
  if (!std::isfinite(time.tokens_per_s_per_gpu) || time.tokens_per_s_per_gpu <= 0) {
    ++out_.stats.untimed;
    return std::nullopt;
  }
  return time;
}

void Worker::keep_timed(const PlanLayout& layout, const FastPeak& peak, const StepTime& time,
                        FamilySet families) {
  PlanCandidate c;
  c.allocated_bytes = peak.allocated_bytes;
  c.reserved_bytes = peak.reserved_bytes;
  c.device_bytes = peak.device_bytes;
  c.host_bytes = peak.host_bytes;
  c.time = time;
  c.layout = layout;
  keep_fit(c, families);
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
  for (auto& [probe, peak] : probes) decide(probe, peak, families_of(probe));
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
            decide(layout, peak, families_of(layout));
            if (!peak.overflow && peak.device_bytes > limit_ && schedule != Schedule::kGPipe)
              missed[at] = true;
          }
    }
  }
}

}  // namespace vramplan::plan_search
