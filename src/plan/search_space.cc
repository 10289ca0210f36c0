#include "plan/search_space.h"

#include "plan/planner_search.h"
#include "training/model_states.h"
#include "training/pipeline.h"
#include "training/scenario_checks.h"

namespace vramplan {
namespace plan_space {
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

// --- scenario_checks.cc's rules for the dimensions the planner varies
// ------------------------------

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
  // scenario_checks.cc: fp8 training is not modelled with sharded parameters.
  const bool fp8 = r.base.training.fp8 != Fp8Recipe::kNone;
  const bool pipeline = r.gpus / (tp * cp * dp) > 1;
  // Offload needs a sharding that runs it (scenario_checks.cc check_offload), and makes ZeRO
  // stages differ even on one data rank (ZeRO-Offload on a single GPU).
  const bool offload = r.base.offload.any();
  Scenario with_mode;
  if (offload) {  // the branch's degrees: sharding_of divides the data ranks by the groups
    with_mode.offload = r.base.offload;
    with_mode.finetune = r.base.finetune;
    Parallelism& p = with_mode.parallel;
    p.tp = tp;
    p.cp = cp;
    p.dp = dp;
    p.ep = ep;
    p.etp = etp;
  }
  std::vector<ShardingChoice> out;
  for (const ShardingChoice& c : all) {
    if (offload) {
      with_mode.parallel.zero = c.zero;
      with_mode.parallel.fsdp = c.fsdp;
      with_mode.parallel.fsdp_shard_group = c.fsdp_shard_group;
      with_mode.parallel.distributed_optimizer = c.distributed_optimizer;
      if (check_offload(with_mode)) continue;
    }
    if (fp8 && shards_parameters(c)) continue;
    if (pipeline && r.space.pipeline_max_zero && c.zero > *r.space.pipeline_max_zero) continue;
    if (!allowed(r.space.zero, c.zero) || !allowed(r.space.fsdp, c.fsdp) ||
        !allowed(r.space.distributed_optimizer, c.distributed_optimizer) ||
        !allowed(r.space.fsdp_shard_group, c.fsdp_shard_group))
      continue;
    out.push_back(c);
    // Nothing to shard: the rest are the same.
    if (data_ranks == 1 && expert_group == 1 && !offload) break;
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
    // Modelled for dense layers with standard attention only (scenario_checks.cc).
    if (c == Recompute::kSelectiveOp &&
        (r.base.model.is_moe() || r.base.model.attention == AttentionKind::kMla))
      continue;
    if (r.base.training.recompute_layers > 0 && c != Recompute::kFull)
      continue;  // scenario_checks.cc
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

}  // namespace plan_space

using namespace plan_space;

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
}  // namespace vramplan
