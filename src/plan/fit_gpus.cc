// The smallest GPU count for a model at its sequence length, global batch and fixed dimensions:
// plan() on increasing counts until one has a layout that fits.
#include "plan/fit_gpus.h"

#include <fmt/format.h>

#include <algorithm>

namespace vramplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(int64_t bytes) { return fmt::format("{:.2f} GiB", bytes / kGiB); }

// " on stage 1 of 4": the planner names the peak stage of the candidates it reports only.
std::string on_stage(const std::string& stage) { return stage.empty() ? "" : " on " + stage; }

FitPoint point_of(const PlanCandidate& c, int64_t gpus, bool fits, const Scenario& base) {
  FitPoint p;
  p.value = gpus;
  p.fits = fits;
  p.allocated_bytes = c.allocated_bytes;
  p.reserved_bytes = c.reserved_bytes;
  p.device_bytes = c.device_bytes;
  p.host_bytes = c.host_bytes;
  p.peak_stage = c.peak_stage;
  p.micro_batch = c.layout.micro_batch;
  p.seq_len = base.training.seq_len;
  p.global_batch = base.training.global_batch;
  return p;
}

// The planner on one count. An error other than a stopped search means the planner has no layout
// at this count (a fixed dimension it cannot take): the count does not fit, for that reason.
struct Tried {
  FitCount count;
  std::optional<PlanResult> result;
  std::optional<Error> error;  // the planner's, when it had no layout at this count
};

Result<Tried> try_count(const FitRequest& r, int64_t gpus) {
  PlanRequest q = r.plan;
  q.gpus = gpus;
  Result<PlanResult> result = plan(q);
  Tried t;
  t.count.gpus = gpus;
  if (!result) {
    if (result.error().field == "search") return result.error();
    t.count.reason = result.error().message();
    t.error = result.error();
    return t;
  }
  t.count.layouts = result->stats.evaluated;
  t.count.fits = !result->candidates.empty();
  if (t.count.fits) {
    t.count.layout = layout_name(result->candidates.front().layout);
    t.count.device_bytes = result->candidates.front().device_bytes;
  } else if (result->closest_miss) {
    t.count.layout = layout_name(result->closest_miss->layout);
    t.count.device_bytes = result->closest_miss->device_bytes;
  }
  t.result = std::move(result).value();
  return t;
}

}  // namespace

Result<FitAnswer> fit_gpu_count(const FitRequest& r, FitAnswer a) {
  const int64_t per_node = std::max<int64_t>(1, r.plan.cluster.gpus_per_node);
  const int64_t cap = r.up_to > 0 ? r.up_to : kFitMaxGpus;
  a.up_to = cap;
  a.step = per_node;
  std::optional<Tried> fitting, last_miss;
  std::optional<Error> first_error;
  std::vector<std::pair<int64_t, PlanCandidate>> misses;  // each count's closest layout
  auto attempt = [&](int64_t gpus) -> std::optional<Error> {
    Result<Tried> t = try_count(r, gpus);
    if (!t) return t.error();
    ++a.evaluated;
    a.layouts += t->count.layouts;
    a.counts.push_back(t->count);
    if (t->error) {
      if (!first_error) first_error = t->error;
    } else if (t->count.fits) {
      fitting = std::move(t).value();
    } else {
      if (t->result->closest_miss) misses.emplace_back(gpus, *t->result->closest_miss);
      last_miss = std::move(t).value();
    }
    return std::nullopt;
  };
  // Below a node: powers of two.
  for (int64_t g = 1; g < per_node && g <= cap && !fitting; g *= 2)
    if (auto e = attempt(g)) return *e;
  // Whole nodes by doubling.
  int64_t prev_nodes = 0, nodes = 1;
  for (; !fitting && nodes * per_node <= cap; nodes *= 2) {
    if (auto e = attempt(nodes * per_node)) return *e;
    if (!fitting) prev_nodes = nodes;
  }
  // Every node count between the last that did not fit and the first that does.
  if (fitting && fitting->count.gpus > per_node) {
    const int64_t found = fitting->count.gpus / per_node;
    std::optional<Tried> first = std::move(fitting);
    fitting.reset();
    for (int64_t n = prev_nodes + 1; n < found && !fitting; ++n)
      if (auto e = attempt(n * per_node)) return *e;
    if (!fitting) fitting = std::move(first);
  }
  if (!fitting) {
    a.bounded_by = "nothing";
    if (!last_miss && first_error) return *first_error;
    if (last_miss && last_miss->result->closest_miss) {
      const PlanCandidate& miss = *last_miss->result->closest_miss;
      a.next = point_of(miss, last_miss->count.gpus, false, r.plan.base);
      a.miss_bytes = miss.device_bytes - a.limit_bytes;
      a.limiting = fmt::format(
          "nothing fits up to {} GPUs: on {} GPUs the closest layout ({}) needs {}{}, the limit "
          "is {}",
          cap, last_miss->count.gpus, layout_name(miss.layout), gib(miss.device_bytes),
          on_stage(miss.peak_stage), gib(a.limit_bytes));
    } else {
      a.limiting = fmt::format("nothing fits up to {} GPUs", cap);
    }
    a.note = "GPU counts tried: powers of two below one node, then whole nodes by doubling";
    return a;
  }
  const PlanResult& found = *fitting->result;
  const PlanCandidate& best = found.candidates.front();
  a.fits = true;
  a.value = fitting->count.gpus;
  a.bounded_by = "memory";
  a.at = point_of(best, a.value, true, r.plan.base);
  // The largest count below the answer that was tried (and did not fit).
  const FitCount* below = nullptr;
  for (const FitCount& c : a.counts)
    if (c.gpus < a.value && (!below || c.gpus > below->gpus)) below = &c;
  if (below && below->device_bytes > 0) {
    for (const auto& [gpus, miss] : misses)
      if (gpus == below->gpus) a.next = point_of(miss, gpus, false, r.plan.base);
    a.miss_bytes = below->device_bytes - a.limit_bytes;
    a.limiting = fmt::format(
        "{} GPUs is the smallest count tried that fits ({}, {} on {}); on {} GPUs the closest "
        "layout ({}) needs {}, {} over the limit of {}",
        a.value, layout_name(best.layout), gib(best.device_bytes), best.peak_stage, below->gpus,
        below->layout, gib(below->device_bytes), gib(below->device_bytes - a.limit_bytes),
        gib(a.limit_bytes));
  } else if (below) {
    a.limiting = fmt::format(
        "{} GPUs is the smallest count tried that fits ({}, {}); on {} GPUs: {}", a.value,
        layout_name(best.layout), gib(best.device_bytes), below->gpus, below->reason);
  } else {
    a.limiting = fmt::format("{} GPUs, the smallest count, fits ({}, {})", a.value,
                             layout_name(best.layout), gib(best.device_bytes));
  }
  a.note = fmt::format(
      "GPU counts tried: powers of two below one node of {}, then whole nodes by doubling, then "
      "every node count between the last that did not fit and the first that did; the layout is "
      "the planner's fastest at {} GPUs",
      per_node, a.value);
  a.plan = found;
  return a;
}

}  // namespace vramplan
