#include "perf/step_time_cache.h"

#include <cmath>

#include "perf/step_time_parts.h"
#include "training/scenario_checks.h"
#include "vramplan/perf/step_time.h"

namespace vramplan {
namespace {

// A step beyond this many seconds is never skipped: with the later parts bounded, the step stays
// finite and its speed a normal positive double below it.
constexpr double kLargestBoundedStep = 1e200;

bool all_finite(const SectionTime& t) {
  return std::isfinite(t.fwd) && std::isfinite(t.bwd) && std::isfinite(t.attention_fwd) &&
         std::isfinite(t.tp_fwd) && std::isfinite(t.tp_bwd) && std::isfinite(t.ep) &&
         std::isfinite(t.cp) && std::isfinite(t.ep_unpaired) && std::isfinite(t.launches_fwd) &&
         std::isfinite(t.launches_bwd) && std::isfinite(t.attention_launches);
}

bool all_finite(const LayoutTimes& times) {
  for (const SectionTime& t : times.per_kind)
    if (!all_finite(t)) return false;
  return all_finite(times.embedding) && all_finite(times.head);
}

// Field by field: comparing the keys as arrays costs a memcmp call per layout.
bool same_layout_key(const LayoutKey& a, const LayoutKey& b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4] &&
         a[5] == b[5];
}

bool same_shape(const PipelineShapeKey& k, const Parallelism& p) {
  return k.pp == p.pp && k.vpp == p.vpp && k.first_stage_layers == p.first_stage_layers &&
         k.last_stage_layers == p.last_stage_layers &&
         k.embedding_as_stage == p.embedding_as_stage && k.loss_as_stage == p.loss_as_stage &&
         k.balanced_split == p.balanced_split &&
         k.compute_balanced_split == p.compute_balanced_split && k.chunk_layers == p.chunk_layers;
}

PipelineShapeKey shape_key_of(const Parallelism& p) {
  PipelineShapeKey k;
  k.pp = p.pp;
  k.vpp = p.vpp;
  k.first_stage_layers = p.first_stage_layers;
  k.last_stage_layers = p.last_stage_layers;
  k.embedding_as_stage = p.embedding_as_stage;
  k.loss_as_stage = p.loss_as_stage;
  k.balanced_split = p.balanced_split;
  k.compute_balanced_split = p.compute_balanced_split;
  k.chunk_layers = p.chunk_layers;
  return k;
}

// The rank terms read the recompute mode only through offload (rank_terms).
ShardingKey sharding_key_of(const Scenario& s) {
  const Parallelism& p = s.parallel;
  const int recompute = s.offload.any() ? static_cast<int>(s.training.recompute) : -1;
  return {p.zero, static_cast<int>(p.fsdp), p.fsdp_shard_group, p.distributed_optimizer, recompute};
}

}  // namespace

LayoutKey layout_key_of(const Scenario& s) {
  const Parallelism& p = s.parallel;
  return {p.tp, p.sequence_parallel ? 1 : 0, p.cp, p.ep, p.etp, s.training.micro_batch};
}

StepTimeCache::StepTimeCache() : d_(std::make_unique<StepTimeCacheData>()) {}
StepTimeCache::~StepTimeCache() = default;
StepTimeCache::StepTimeCache(StepTimeCache&&) noexcept = default;
StepTimeCache& StepTimeCache::operator=(StepTimeCache&&) noexcept = default;

namespace {

// The same steps as above, each redone only when what it depends on changed since the last
// layout: the section times (LayoutKey), the visited ranks (PipelineShapeKey), their work (both),
// their slowest (also the recompute mode) and their terms (also the data-parallel degree, the
// microbatches per step and the sharding, ShardingKey).
// The cached parts a layout's step needs before its rank terms: section times, ranks, the
// slowest rank.
struct Stages {
  const StepTimeCacheData::Sections* sections;
  const RankWork* slowest;
  int64_t microbatches;
};

Stages stages_of(const std::shared_ptr<const StepTimeData>& model, const Scenario& s,
                 StepTimeCacheData& c) {
  const StepTimeData& data = *model;
  if (c.model != model) {
    c.sections.clear();
    c.current = nullptr;
    c.model = model;
    c.shape_known = false;
  }
  const LayoutKey key = layout_key_of(s);
  if (!c.current || !same_layout_key(c.key, key)) {
    if (c.sections.size() >= StepTimeCacheData::kMaxLayoutKeys) c.sections.clear();
    auto [at, added] = c.sections.try_emplace(key);
    if (added) {
      at->second.times = layout_times(data, s);
      at->second.dims = op_dims(s);
      at->second.finite = all_finite(at->second.times);
    }
    c.current = &at->second;
    c.key = key;
    c.ranks_known = false;
  }
  if (!c.shape_known || !same_shape(c.shape, s.parallel)) {
    visited_ranks(data, s, c.visited);
    c.shape = shape_key_of(s.parallel);
    c.shape_known = true;
    c.ranks_known = false;
  }
  const int64_t microbatches = microbatches_of(s);
  if (!c.ranks_known) {
    pipeline_ranks(data, s, c.current->times, c.visited, c.ranks);
    c.ranks_known = true;
    c.slowest_known.fill(false);
    c.terms.clear();
  }
  if (c.dp != s.parallel.dp || c.microbatches != microbatches) {
    c.dp = s.parallel.dp;
    c.microbatches = microbatches;
    c.terms.clear();
  }
  const size_t mode = static_cast<size_t>(s.training.recompute);
  if (!c.slowest_known[mode]) {
    c.slowest[mode] = slowest_rank(data, s, c.ranks);
    c.slowest_known[mode] = true;
  }
  return {c.current, &c.slowest[mode], microbatches};
}

// The step of a layout whose stages are ready.
StepTime finish_step(const StepTimeData& data, const Scenario& s, StepTimeCacheData& c,
                     const Stages& at) {
  const ShardingKey sharding = sharding_key_of(s);
  const RankTerms* terms = nullptr;
  for (const auto& [k, t] : c.terms)
    if (k == sharding) terms = &t;
  if (!terms) {
    c.terms.emplace_back(sharding,
                         rank_terms(data, s, c.ranks, static_cast<double>(at.microbatches)));
    terms = &c.terms.back().second;
  }
  return step_time_of(data, s, at.sections->dims, static_cast<double>(at.microbatches), *at.slowest,
                      *terms);
}

}  // namespace

StepTime StepTimeModel::evaluate(const Scenario& s, StepTimeCache& cache) const {
  const Stages at = stages_of(data_, s, *cache.d_);
  return finish_step(*data_, s, *cache.d_, at);
}

std::optional<StepTime> StepTimeModel::evaluate_unless_slower(const Scenario& s,
                                                              StepTimeCache& cache,
                                                              double tokens_floor) const {
  const StepTimeData& data = *data_;
  const Stages at = stages_of(data_, s, *cache.d_);
  // The later parts are finite and not negative here (later_parts_bounded, finite section
  // times, no offload); a first sum finite, positive and far from overflow keeps the whole step
  // finite and the speed finite and positive: a layout skipped is one the model would time.
  if (data.later_parts_bounded && at.sections->finite && !s.offload.any()) {
    StepTime first;
    const double microbatches = static_cast<double>(at.microbatches);
    const double seconds = first_parts_seconds(s, microbatches, *at.slowest, first);
    if (seconds > 0 && seconds < kLargestBoundedStep &&
        tokens_per_gpu(s, at.sections->dims, microbatches, seconds) < tokens_floor)
      return std::nullopt;
  }
  return finish_step(data, s, *cache.d_, at);
}

}  // namespace vramplan
