#include "core/planner_search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <tuple>

#include "core/model_states.h"
#include "core/pipeline.h"

namespace vramplan {
namespace {

constexpr int64_t kMaxDegree = int64_t{1} << 20;      // validate.cc: any single degree
constexpr int64_t kMaxMicroBatch = int64_t{1} << 20;  // validate.cc
constexpr int64_t kNoBound = std::numeric_limits<int64_t>::max();

template <class T>
bool allowed(const std::vector<T>& list, const T& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

int64_t max_tp_of(const PlanRequest& r) {
  return r.max_tp > 0 ? r.max_tp : std::max<int64_t>(1, r.cluster.gpus_per_node);
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// --- validate.cc's rules for the dimensions the planner varies ------------------------------

// check_tensor_parallel: heads, KV heads (standard attention) and dense FFN width divide by tp.
bool tp_divides_model(const ModelConfig& m, int64_t tp) {
  if (m.num_heads % tp != 0) return false;
  if (m.attention == AttentionKind::kStandard && m.num_kv_heads % tp != 0) return false;
  const bool has_dense_mlp = !m.is_moe() || std::find(m.moe_layers.begin(), m.moe_layers.end(),
                                                      false) != m.moe_layers.end();
  return !has_dense_mlp || m.ffn % tp == 0;
}

// check_tensor_parallel: sequence parallelism splits each CP rank's tokens over tp.
bool sp_divides_sequence(int64_t seq_len, int64_t tp, int64_t cp, bool sp) {
  return !(tp > 1 && sp && (seq_len / cp) % tp != 0);
}

// check_context_parallel: two chunks of the sequence per CP rank.
bool cp_divides_sequence(int64_t seq_len, int64_t cp) { return cp == 1 || seq_len % (2 * cp) == 0; }

// check_experts.
bool experts_fit(const ModelConfig& m, int64_t tp, int64_t cp, int64_t dp, int64_t ep,
                 int64_t etp) {
  if (!m.is_moe()) return ep == 1 && etp == 1;
  if (m.moe.num_experts % ep != 0 || m.moe.expert_ffn % etp != 0) return false;
  return (tp * cp * dp) % (ep * etp) == 0;
}

// --- The planner's option lists ---------------------------------------------------------------

bool same_split(const PipelineSplit& a, const PipelineSplit& b) {
  return a.kind == b.kind && a.first_stage_layers == b.first_stage_layers &&
         a.last_stage_layers == b.last_stage_layers;
}

// Layers per chunk, or empty when some chunk would hold none (or the split is invalid).
std::vector<int64_t> chunk_sizes_of(const ModelConfig& model, int64_t pp, int64_t vpp,
                                    const PipelineSplit& split) {
  Parallelism p;
  p.pp = pp;
  p.vpp = vpp;
  p.schedule = vpp > 1 ? Schedule::kInterleaved : Schedule::k1F1B;
  set_split(split, p);
  if (validate_pipeline(model, p)) return {};
  std::vector<int64_t> sizes;
  if (p.compute_balanced_split) {
    sizes = compute_cost_split(model, pp);
  } else {
    for (int64_t c = 0; c < pp * vpp; ++c) sizes.push_back(chunk_layers(model.num_layers, p, c));
  }
  if (std::any_of(sizes.begin(), sizes.end(), [](int64_t n) { return n < 1; })) return {};
  return sizes;
}

bool split_searched(const PlanRequest& r, SplitKind kind) {
  if (r.space.split.empty())
    return std::find(kSplitOrder, kSplitOrder + kGenericSplitKinds, kind) !=
           kSplitOrder + kGenericSplitKinds;
  return allowed(r.space.split, kind);
}

// The splits the planner tries for (pp, vpp): each allowed kind that applies, once per distinct
// list of chunk sizes.
std::vector<PipelineSplit> splits_for(const PlanRequest& r, int64_t pp, int64_t vpp) {
  const int64_t layers = r.base.model.num_layers;
  std::vector<PipelineSplit> out;
  if (pp == 1) {
    // One stage: the split does not exist. First/last stage layers need two stages.
    const bool needs_stages = r.space.fixed_split && (r.space.fixed_split->first_stage_layers > 0 ||
                                                      r.space.fixed_split->last_stage_layers > 0);
    if (vpp == 1 && !needs_stages) out.push_back(PipelineSplit{});
    return out;
  }
  if (r.space.fixed_split) {
    if (!chunk_sizes_of(r.base.model, pp, vpp, *r.space.fixed_split).empty())
      out.push_back(*r.space.fixed_split);
    return out;
  }
  std::vector<std::vector<int64_t>> seen;
  for (SplitKind kind : kSplitOrder) {
    if (!split_searched(r, kind)) continue;
    const std::optional<PipelineSplit> split = split_of(kind, layers, pp, vpp);
    if (!split) continue;
    std::vector<int64_t> sizes = chunk_sizes_of(r.base.model, pp, vpp, *split);
    if (sizes.empty() || std::find(seen.begin(), seen.end(), sizes) != seen.end()) continue;
    seen.push_back(std::move(sizes));
    out.push_back(*split);
  }
  return out;
}

std::vector<Schedule> schedules_for(const PlanRequest& r, int64_t pp, int64_t vpp) {
  if (pp == 1) {
    // One stage runs microbatches one after another whatever the schedule is called.
    const bool any = r.space.schedule.empty() || allowed(r.space.schedule, Schedule::k1F1B) ||
                     allowed(r.space.schedule, Schedule::kGPipe);
    return any ? std::vector<Schedule>{Schedule::k1F1B} : std::vector<Schedule>{};
  }
  std::vector<Schedule> out;
  for (Schedule s : {vpp > 1 ? Schedule::kInterleaved : Schedule::k1F1B, Schedule::kGPipe})
    if (allowed(r.space.schedule, s)) out.push_back(s);
  return out;
}

// Whether a sharding choice shards the parameters themselves (sharding_of decides it).
bool shards_parameters(const ShardingChoice& c) {
  Parallelism p;
  p.zero = c.zero;
  p.fsdp = c.fsdp;
  return sharding_of(p).params;
}

std::vector<ShardingChoice> shardings_for(const PlanRequest& r, int64_t tp, int64_t cp, int64_t dp,
                                          int64_t ep, int64_t etp) {
  const int64_t data_ranks = dp * cp;
  // Routed experts' states shard over their own data ranks; a dense model has none.
  const int64_t expert_group =
      r.base.model.is_moe() ? std::max<int64_t>(1, tp * cp * dp / (ep * etp)) : 1;
  std::vector<ShardingChoice> all = {
      {0, FsdpMode::kNone, 0, false},       {1, FsdpMode::kNone, 0, false},
      {2, FsdpMode::kNone, 0, false},       {3, FsdpMode::kNone, 0, false},
      {0, FsdpMode::kNone, 0, true},        {0, FsdpMode::kFullShard, 0, false},
      {0, FsdpMode::kShardGradOp, 0, false}};
  // HYBRID_SHARD: shard within the data ranks of a node, replicate across nodes.
  std::vector<int64_t> groups = r.space.fsdp_shard_group;
  if (groups.empty()) {
    const int64_t per_node = std::max<int64_t>(1, r.cluster.gpus_per_node / tp);
    groups.push_back(std::gcd(data_ranks, per_node));
  }
  for (int64_t g : groups)
    if (g > 1 && g < data_ranks && data_ranks % g == 0)
      all.push_back({0, FsdpMode::kHybridShard, g, false});
  // NO_SHARD is DDP under another name: only when asked for.
  if (!r.space.fsdp.empty() && allowed(r.space.fsdp, FsdpMode::kNoShard))
    all.push_back({0, FsdpMode::kNoShard, 0, false});
  // validate.cc: fp8 training is not modelled with sharded parameters.
  const bool fp8 = r.base.training.fp8 != Fp8Recipe::kNone;
  const bool pipeline = r.gpus / (tp * cp * dp) > 1;
  std::vector<ShardingChoice> out;
  for (const ShardingChoice& c : all) {
    if (fp8 && shards_parameters(c)) continue;
    if (pipeline && r.space.pipeline_max_zero && c.zero > *r.space.pipeline_max_zero) continue;
    if (!allowed(r.space.zero, c.zero) || !allowed(r.space.fsdp, c.fsdp) ||
        !allowed(r.space.distributed_optimizer, c.distributed_optimizer) ||
        !allowed(r.space.fsdp_shard_group, c.fsdp_shard_group))
      continue;
    out.push_back(c);
    if (data_ranks == 1 && expert_group == 1) break;  // nothing to shard: the rest are the same
  }
  return out;
}

std::vector<Recompute> recomputes_for(const PlanRequest& r) {
  std::vector<Recompute> out;
  // torchtitan's op-level policy is searched only when asked for (--recompute selective-op).
  for (Recompute c :
       {Recompute::kNone, Recompute::kSelective, Recompute::kFull, Recompute::kSelectiveOp}) {
    if (!allowed(r.space.recompute, c)) continue;
    if (c == Recompute::kSelectiveOp && r.space.recompute.empty()) continue;
    if (c == Recompute::kSelectiveOp && r.base.training.fp8 != Fp8Recipe::kNone) continue;
    if (r.base.training.recompute_layers > 0 && c != Recompute::kFull) continue;  // validate.cc
    out.push_back(c);
  }
  return out;
}

std::vector<int64_t> micro_batches_for(const PlanRequest& r, int64_t dp) {
  std::vector<int64_t> out;
  const int64_t global = r.base.training.global_batch;
  if (global % dp != 0) return out;
  for (int64_t mb : divisors(global / dp))
    if (mb <= kMaxMicroBatch && allowed(r.space.micro_batch, mb)) out.push_back(mb);
  return out;
}

// tp values worth a branch: divisors of the GPUs, within max_tp, dividing the model.
std::vector<int64_t> tps_for(const PlanRequest& r) {
  std::vector<int64_t> out;
  for (int64_t tp : divisors(r.gpus))
    if (tp <= max_tp_of(r) && tp <= kMaxDegree && allowed(r.space.tp, tp) &&
        tp_divides_model(r.base.model, tp))
      out.push_back(tp);
  return out;
}

std::vector<bool> sequence_parallel_for(const PlanRequest& r, int64_t tp, int64_t cp) {
  if (tp == 1) return {false};  // nothing to split
  std::vector<bool> out;
  for (bool sp : {true, false})
    if (allowed(r.space.sequence_parallel, sp) &&
        sp_divides_sequence(r.base.training.seq_len, tp, cp, sp))
      out.push_back(sp);
  return out;
}

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
  return std::make_tuple(l.tp, l.sequence_parallel, l.pp, l.vpp, static_cast<int>(l.schedule),
                         static_cast<int>(l.split.kind), l.split.first_stage_layers,
                         l.split.last_stage_layers, l.cp, l.ep, l.etp, l.dp, l.micro_batch,
                         static_cast<int>(l.recompute), l.sharding.zero,
                         static_cast<int>(l.sharding.fsdp), l.sharding.fsdp_shard_group,
                         l.sharding.distributed_optimizer);
}

bool worse_for_heap(const PlanCandidate& a, const PlanCandidate& b) {
  return better_candidate(a, b);  // heap front = the worst kept
}

class Worker {
 public:
  Worker(const PlanRequest& r, const FastMemoryModel& memory, const LayoutTimer& timer,
         int64_t limit, const std::vector<PipeOption>& pipes)
      : r_(r), memory_(memory), timer_(timer), limit_(limit), pipes_(pipes), scenario_(r.base) {
    applies_[static_cast<int>(Family::kExpert)] = r.base.model.is_moe();
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
  void run_slow(const Branch& b, PlanLayout& layout, const Inner& in,
                const std::vector<ShardingChoice>& modes);

  const PlanRequest& r_;
  const FastMemoryModel& memory_;
  const LayoutTimer& timer_;
  const int64_t limit_;
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
  if (static_cast<int>(top.size()) < r_.top_k) {
    top.push_back(c);
    std::push_heap(top.begin(), top.end(), worse_for_heap);
  } else if (better_candidate(c, top.front())) {
    std::pop_heap(top.begin(), top.end(), worse_for_heap);
    top.back() = c;
    std::push_heap(top.begin(), top.end(), worse_for_heap);
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
  if (peak.device_bytes > limit_) {
    c.layout = layout;
    keep_miss(c);
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
}

void Worker::run_slow(const Branch& b, PlanLayout& layout, const Inner& in,
                      const std::vector<ShardingChoice>& modes) {
  const PipeOption& pipe = pipes_[b.pipe];
  for (bool sp : in.sps)
    for (int64_t mb : in.mbs)
      for (Recompute rc : in.rcs)
        for (Schedule schedule : pipe.schedules)
          for (const ShardingChoice& mode : modes) {
            layout.sequence_parallel = sp;
            layout.micro_batch = mb;
            layout.recompute = rc;
            layout.schedule = schedule;
            layout.sharding = mode;
            apply_layout(layout, scenario_);
            decide(layout, memory_.evaluate(scenario_));
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
          for (int g = 0; g < groups; ++g)
            other[g] = memory_.other_allocated(shape.group[g], terms, par, rc, m);
          for (size_t k = 0; k < modes.size(); ++k) {
            if (pruned[k]) continue;
            Wide worst = 0;
            for (int g = 0; g < groups; ++g)
              worst = std::max(worst, memory_.rank_peak(states[k][g], other[g], m, par));
            layout.sharding = modes[k];
            decide(layout, memory_.finish(worst, par));
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

void merge_into(SearchResult& total, SearchResult& part, int top_k) {
  total.top.insert(total.top.end(), part.top.begin(), part.top.end());
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
  PlanStats& s = total.stats;
  s.evaluated += part.stats.evaluated;
  s.memory_computed += part.stats.memory_computed;
  s.memory_fallback += part.stats.memory_fallback;
  s.pruned += part.stats.pruned;
  s.fitting += part.stats.fitting;
  s.untimed += part.stats.untimed;
}

}  // namespace

bool better_candidate(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.time.tokens_per_s_per_gpu != b.time.tokens_per_s_per_gpu)
    return a.time.tokens_per_s_per_gpu > b.time.tokens_per_s_per_gpu;
  if (a.device_bytes != b.device_bytes) return a.device_bytes < b.device_bytes;
  return layout_key(a.layout) < layout_key(b.layout);
}

bool closer_miss(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.device_bytes != b.device_bytes) return a.device_bytes < b.device_bytes;
  return layout_key(a.layout) < layout_key(b.layout);
}

std::optional<PipelineSplit> split_of(SplitKind kind, int64_t layers, int64_t pp, int64_t vpp) {
  const int64_t chunks = pp * vpp;
  switch (kind) {
    case SplitKind::kEven:
      if (layers % chunks == 0) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kEmbeddingAndLoss:
      if ((layers + 2) % chunks == 0) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kEmbedding:
    case SplitKind::kLoss:
      if ((layers + 1) % chunks == 0) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kLighterEnds:
      if (vpp != 1 || pp < 3) return std::nullopt;
      // The most layers the two ends can keep while staying lighter than every middle stage.
      for (int64_t ends = (layers - 1) / 2; ends >= 1; --ends) {
        const int64_t rest = layers - 2 * ends;
        if (rest >= pp - 2 && rest % (pp - 2) == 0 && ends < rest / (pp - 2))
          return PipelineSplit{kind, ends, ends};
      }
      return std::nullopt;
    case SplitKind::kBalanced:
      if (chunks <= layers) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kBalancedEmbeddingAndLoss:
      if (chunks <= layers + 2) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kCompute:
      if (vpp == 1 && pp <= layers) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
  }
  return std::nullopt;
}

bool is_canonical(const PlanRequest& r, const PlanLayout& l) {
  if (l.tp < 1 || l.pp < 1 || l.vpp < 1 || l.cp < 1 || l.dp < 1 || l.ep < 1 || l.etp < 1 ||
      l.micro_batch < 1)
    return false;
  if (l.tp * l.pp * l.cp * l.dp != r.gpus) return false;
  const std::vector<int64_t> tps = tps_for(r);
  if (std::find(tps.begin(), tps.end(), l.tp) == tps.end()) return false;
  const std::vector<bool> sps = sequence_parallel_for(r, l.tp, l.cp);
  if (std::find(sps.begin(), sps.end(), l.sequence_parallel) == sps.end()) return false;
  if (!allowed(r.space.pp, l.pp) || !allowed(r.space.vpp, l.vpp) || !allowed(r.space.cp, l.cp) ||
      !allowed(r.space.dp, l.dp) || !allowed(r.space.ep, l.ep) || !allowed(r.space.etp, l.etp))
    return false;
  if (l.etp > max_tp_of(r) || l.vpp > std::max<int64_t>(1, r.base.model.num_layers / l.pp))
    return false;
  const std::vector<Schedule> schedules = schedules_for(r, l.pp, l.vpp);
  if (std::find(schedules.begin(), schedules.end(), l.schedule) == schedules.end()) return false;
  const std::vector<PipelineSplit> splits = splits_for(r, l.pp, l.vpp);
  if (std::none_of(splits.begin(), splits.end(),
                   [&](const PipelineSplit& s) { return same_split(s, l.split); }))
    return false;
  const std::vector<int64_t> mbs = micro_batches_for(r, l.dp);
  if (std::find(mbs.begin(), mbs.end(), l.micro_batch) == mbs.end()) return false;
  const std::vector<Recompute> rcs = recomputes_for(r);
  if (std::find(rcs.begin(), rcs.end(), l.recompute) == rcs.end()) return false;
  const std::vector<ShardingChoice> modes = shardings_for(r, l.tp, l.cp, l.dp, l.ep, l.etp);
  return std::any_of(modes.begin(), modes.end(), [&](const ShardingChoice& m) {
    return m.zero == l.sharding.zero && m.fsdp == l.sharding.fsdp &&
           m.fsdp_shard_group == l.sharding.fsdp_shard_group &&
           m.distributed_optimizer == l.sharding.distributed_optimizer;
  });
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
  auto work = [&](Worker& w) {
    for (size_t i = next++; i < branches.size(); i = next++) w.run(branches[i]);
  };
  if (threads == 1) {
    work(workers[0]);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, std::ref(workers[t]));
    for (std::thread& th : pool) th.join();
  }
  SearchResult total;
  for (Worker& w : workers) merge_into(total, w.result(), r.top_k);
  // A closest miss matters only when nothing fits; a family's only when none of it fits.
  if (!total.top.empty()) total.closest_miss.reset();
  for (int f = 0; f < kFamilies; ++f)
    if (total.family_best[f]) total.family_miss[f].reset();
  total.stats.threads = threads;
  return total;
}

}  // namespace vramplan
