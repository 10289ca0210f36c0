// The "what fits" searches over one layout: the largest micro-batch, sequence length and global
// batch. Peak memory never falls as each of them grows (fit_search_test.cc checks that against
// estimate() on small ranges), so each search probes by doubling and bisects the last interval:
// about 2·log2(answer) estimates.
#include "vramplan/plan/fit_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>

#include "plan/fit_gpus.h"
#include "training/scenario_checks.h"
#include "vramplan/training/estimate.h"

namespace vramplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// scenario_checks.cc's largest values.
constexpr int64_t kMaxSeqLen = int64_t{1} << 26;
constexpr int64_t kMaxMicroBatch = int64_t{1} << 20;
constexpr int64_t kMaxGlobalBatch = int64_t{1} << 40;
// The global-batch question without a fixed micro-batch tries every micro-batch up to the largest
// that fits, or this many spread over them (powers of two and the largest).
constexpr int64_t kMaxMicroBatchesTried = 64;

std::string gib(int64_t bytes) { return fmt::format("{:.2f} GiB", bytes / kGiB); }

// The scenario of one value of the question.
Scenario scenario_at(const FitRequest& r, int64_t value, int64_t microbatches) {
  Scenario s = r.base;
  const int64_t dp = s.parallel.dp;
  switch (r.question) {
    case FitQuestion::kMicroBatch:
      s.training.micro_batch = value;
      s.training.global_batch = value * dp * microbatches;
      break;
    case FitQuestion::kSeqLen:
      s.training.seq_len = value;
      break;
    case FitQuestion::kGlobalBatch:
      s.training.global_batch = s.training.micro_batch * dp * value;
      break;
    case FitQuestion::kGpus:
      break;
  }
  return s;
}

FitPoint evaluate(const FitRequest& r, const Scenario& s, int64_t value) {
  FitPoint p;
  p.value = value;
  p.micro_batch = s.training.micro_batch;
  p.seq_len = s.training.seq_len;
  // Products past the scenario checks' range are no scenario: say so rather than overflow.
  if (static_cast<__int128>(s.training.micro_batch) * s.parallel.dp * std::max<int64_t>(1, value) >
      static_cast<__int128>(kMaxGlobalBatch)) {
    p.invalid =
        fmt::format("global batch past the largest the estimate takes ({})", kMaxGlobalBatch);
    return p;
  }
  Result<Estimate> e = estimate(s, EstimateOptions{false});
  if (!e) {
    p.invalid = e.error().message();
    return p;
  }
  const StageEstimate& stage = e->stages[e->peak.stage];
  p.allocated_bytes = e->peak.allocated_bytes;
  p.reserved_bytes = e->peak.reserved_bytes;
  p.device_bytes = e->peak.device_bytes;
  p.host_bytes = e->peak.host_bytes;
  p.peak_stage = stage.name;
  p.in_flight_microbatches = stage.in_flight_microbatches;
  p.microbatches = e->microbatches;
  p.global_batch = s.training.global_batch > 0 ? s.training.global_batch
                                               : p.micro_batch * s.parallel.dp * p.microbatches;
  for (const Row& row : stage.rows) {
    if (!on_gpu(row.counts_toward)) continue;
    auto it = std::find_if(p.components.begin(), p.components.end(),
                           [&](const auto& c) { return c.first == row.component; });
    if (it == p.components.end())
      p.components.emplace_back(row.component, row.bytes);
    else
      it->second += row.bytes;
  }
  Fit fit = fit_on(r.gpu, p.device_bytes);
  fit_host(fit, p.host_bytes, e->world_size, r.host_gpus_per_node, r.host_memory_gib);
  p.host_over = fit.host_checked && fit.host_verdict == Verdict::kOom;
  p.fits = p.device_bytes <= fit_limit_bytes(r.gpu, r.headroom) && !p.host_over;
  return p;
}

// The base's microbatches per step (the micro-batch question keeps them).
int64_t base_microbatches(const Scenario& base) { return microbatches_of(base); }

// The largest k in [1, last] that fits, fits(k) being non-increasing in k: probes 1, 2, 4, ...
// then bisects. `below` is the point at the answer (none when 1 does not fit), `above` the first
// k past it (none when `last` fits).
struct Probe {
  std::optional<FitPoint> below, above;
};

Probe largest(int64_t last, const std::function<FitPoint(int64_t)>& at) {
  Probe out;
  FitPoint first = at(1);
  if (!first.fits) {
    out.above = std::move(first);
    return out;
  }
  int64_t lo = 1, hi = 0;
  out.below = std::move(first);
  while (hi == 0 && lo < last) {
    const int64_t k = std::min(last, lo * 2);
    FitPoint p = at(k);
    if (p.fits) {
      lo = k;
      out.below = std::move(p);
    } else {
      hi = k;
      out.above = std::move(p);
    }
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    FitPoint p = at(mid);
    if (p.fits) {
      lo = mid;
      out.below = std::move(p);
    } else {
      hi = mid;
      out.above = std::move(p);
    }
  }
  return out;
}

int64_t component_bytes(const FitPoint& p, const std::string& name) {
  for (const auto& [component, bytes] : p.components)
    if (component == name) return bytes;
  return 0;
}

// "micro-batch 8", "seq_len 32768", "8 microbatches per step"
std::string value_words(FitQuestion q, int64_t v) {
  switch (q) {
    case FitQuestion::kMicroBatch:
      return fmt::format("micro-batch {}", v);
    case FitQuestion::kSeqLen:
      return fmt::format("seq_len {}", v);
    case FitQuestion::kGlobalBatch:
      return fmt::format("global batch {}", v);
    default:
      return fmt::format("{} GPUs", v);
  }
}

// The peak's largest parts, for "nothing fits".
std::string largest_parts(const FitPoint& p) {
  std::vector<std::pair<std::string, int64_t>> parts = p.components;
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (size_t i = 0; i < parts.size() && i < 3; ++i)
    out += fmt::format("{}{} {}", i ? ", " : "", parts[i].first, gib(parts[i].second));
  return out;
}

// What grows from `at` to `next` (one step apart), in words.
std::string growth_words(FitQuestion q, const FitAnswer& a, const FitPoint& at,
                         const FitPoint& next, int64_t at_value, int64_t next_value) {
  std::string component;
  int64_t grow = 0;
  for (const auto& [name, bytes] : next.components) {
    const int64_t d = bytes - component_bytes(at, name);
    if (d > grow) {
      grow = d;
      component = name;
    }
  }
  const std::string unit = q == FitQuestion::kMicroBatch ? "micro-batch"
                           : q == FitQuestion::kSeqLen
                               ? fmt::format("{} tokens", next_value - at_value)
                               : fmt::format("{} sequences", next_value - at_value);
  std::string out =
      component.empty()
          ? fmt::format("the peak grows {} from {} to {}", gib(next.device_bytes - at.device_bytes),
                        value_words(q, at_value), value_words(q, next_value))
          : fmt::format("{} grow {} per {} ({} → {})", component, gib(grow), unit,
                        value_words(q, at_value), value_words(q, next_value));
  out += fmt::format(": the peak goes from {} to {} on {}, the limit is {}", gib(at.device_bytes),
                     gib(next.device_bytes), next.peak_stage, gib(a.limit_bytes));
  if (next.host_over) out += "; the offloaded rows pass the node's RAM";
  return out;
}

// The sequence-length answer's why: the component that grows most per 1,024 tokens between
// half the answer and the answer, and what the next step needs.
std::string seq_growth_words(const FitAnswer& a, const FitPoint& half) {
  std::string component;
  int64_t grow = 0;
  for (const auto& [name, bytes] : a.at->components) {
    const int64_t d = bytes - component_bytes(half, name);
    if (d > grow) {
      grow = d;
      component = name;
    }
  }
  const double per_1k =
      static_cast<double>(grow) * 1024.0 / static_cast<double>(a.at->seq_len - half.seq_len);
  std::string out =
      component.empty()
          ? "the peak does not grow between half the answer and the answer"
          : fmt::format("{} grow {:.3f} GiB per 1,024 tokens", component, per_1k / kGiB);
  out += fmt::format(
      " (seq_len {} → {}: the peak {} → {} on {}); seq_len {} needs {}, the limit "
      "is {}",
      half.seq_len, a.at->seq_len, gib(half.device_bytes), gib(a.at->device_bytes),
      a.at->peak_stage, a.next->seq_len, gib(a.next->device_bytes), gib(a.limit_bytes));
  if (a.next->host_over) out += "; the offloaded rows pass the node's RAM";
  return out;
}

nlohmann::json scenario_json(const FitRequest& r, const FitPoint& p) {
  nlohmann::json s = r.settings.is_object() ? r.settings : nlohmann::json::object();
  s.erase("grad_accum");
  if (r.question == FitQuestion::kSeqLen) {
    s["seq_len"] = p.seq_len;
  } else {
    s["micro_batch"] = p.micro_batch;
    s["global_batch"] = p.global_batch;
  }
  return s;
}

// Fills value, at, next, miss and limiting from a probe; `value_of` maps the index searched to
// the question's value.
void settle(const FitRequest& r, FitAnswer& a, Probe probe, int64_t last,
            const std::function<int64_t(int64_t)>& value_of) {
  a.fits = probe.below.has_value();
  a.at = std::move(probe.below);
  a.next = std::move(probe.above);
  if (a.at) {
    a.value = value_of(a.at->value);
    a.scenario = scenario_json(r, *a.at);
  }
  if (a.next && a.next->invalid.empty()) a.miss_bytes = a.next->device_bytes - a.limit_bytes;
  if (!a.at) {
    const FitPoint& first = *a.next;
    a.bounded_by = "nothing";
    a.limiting = first.invalid.empty()
                     ? fmt::format(
                           "nothing fits: {} needs {} on {}, the {} has {} usable (limit {} "
                           "with {:g}% headroom); largest parts: {}",
                           value_words(r.question, value_of(first.value)), gib(first.device_bytes),
                           first.peak_stage, r.gpu.name, gib(r.gpu.usable_bytes),
                           gib(a.limit_bytes), a.headroom * 100, largest_parts(first))
                     : fmt::format("nothing fits: {} is no valid scenario: {}",
                                   value_words(r.question, value_of(first.value)), first.invalid);
    if (first.host_over)
      a.limiting += fmt::format("; its offloaded rows ({} per rank) pass the node's RAM",
                                gib(first.host_bytes));
  } else if (!a.next) {
    a.bounded_by = "cap";
    a.limiting = fmt::format("every value up to the cap fits: {} needs {} (limit {})",
                             value_words(r.question, value_of(last)), gib(a.at->device_bytes),
                             gib(a.limit_bytes));
  } else if (!a.next->invalid.empty()) {
    a.bounded_by = "invalid";
    a.limiting = fmt::format("{} is no valid scenario: {}",
                             value_words(r.question, value_of(a.next->value)), a.next->invalid);
  } else {
    a.bounded_by = "memory";
    a.limiting =
        growth_words(r.question, a, *a.at, *a.next, value_of(a.at->value), value_of(a.next->value));
  }
  // The points say the question's value (the global batch, not its microbatches).
  if (a.at) a.at->value = value_of(a.at->value);
  if (a.next) a.next->value = value_of(a.next->value);
}

std::optional<Error> check_request(const FitRequest& r) {
  if (!std::isfinite(r.headroom) || r.headroom < 0 || r.headroom > 0.9)
    return Error{"headroom", fmt::format("{}", r.headroom),
                 "a fraction of usable memory kept free, from 0 to 0.9", ""};
  if (r.seq_multiple < 1 || r.seq_multiple > kMaxSeqLen)
    return Error{"seq_multiple", std::to_string(r.seq_multiple),
                 fmt::format("an integer from 1 to {}", kMaxSeqLen), ""};
  if (r.up_to < 0) return Error{"up_to", std::to_string(r.up_to), "a positive integer", ""};
  if (r.gpu.usable_bytes <= 0) return Error{"gpu", r.gpu.id, "a GPU with a known memory size", ""};
  return std::nullopt;
}

Result<FitAnswer> micro_batch_answer(const FitRequest& r, FitAnswer a) {
  const int64_t m = base_microbatches(r.base);
  const int64_t dp = r.base.parallel.dp;
  const int64_t last = std::min({a.up_to, kMaxMicroBatch, kMaxGlobalBatch / (dp * m)});
  Probe probe = largest(last, [&](int64_t v) {
    ++a.evaluated;
    return evaluate(r, scenario_at(r, v, m), v);
  });
  settle(r, a, std::move(probe), last, [](int64_t v) { return v; });
  a.up_to = last;
  a.microbatches = m;
  a.note = fmt::format(
      "at {} microbatch{} per step on each of dp = {} ranks: the global batch is micro-batch × {}",
      m, m == 1 ? "" : "es", dp, dp * m);
  return a;
}

Result<FitAnswer> seq_len_answer(const FitRequest& r, FitAnswer a) {
  a.step = seq_len_step(r.base.parallel, r.seq_multiple);
  const int64_t last = std::min(a.up_to, kMaxSeqLen) / a.step;
  if (last < 1)
    return Error{"up_to", std::to_string(a.up_to),
                 fmt::format("at least the sequence-length step {}", a.step), ""};
  Probe probe = largest(last, [&](int64_t k) {
    ++a.evaluated;
    return evaluate(r, scenario_at(r, k * a.step, 0), k * a.step);
  });
  // Growth per token is too small to read at a fine step: the rate between half the answer and
  // the answer says what grows.
  std::optional<FitPoint> half;
  if (probe.below && probe.above && probe.above->invalid.empty() && probe.below->value > a.step) {
    const int64_t at = probe.below->value / a.step / 2 * a.step;
    ++a.evaluated;
    half = evaluate(r, scenario_at(r, at, 0), at);
  }
  // The points carry seq_len values already: the index is value / step.
  settle(r, a, std::move(probe), last * a.step, [](int64_t v) { return v; });
  if (half && a.bounded_by == "memory") a.limiting = seq_growth_words(a, *half);
  a.up_to = last * a.step;
  a.note = fmt::format("sequence lengths on multiples of {}", a.step);
  return a;
}

// The smallest microbatch count from which the peak no longer grows: the peak at `last` is
// reached from there on (the schedule's in-flight limit).
int64_t saturation(const std::function<FitPoint(int64_t)>& at, int64_t last, const FitPoint& top) {
  auto same = [&](const FitPoint& p) {
    return p.device_bytes == top.device_bytes && p.host_bytes == top.host_bytes;
  };
  // peak(lo) < peak(last) (lo = 0: none yet), peak(hi) == peak(last): probe 1, 2, 4, ... first.
  int64_t lo = 0, hi = 1;
  while (hi < last && !same(at(hi))) {
    lo = hi;
    hi = std::min(last, hi * 2);
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (same(at(mid)))
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

// The micro-batches the global-batch question tries: the one given, or every one up to the
// largest that fits at one microbatch per step (the least memory of any step), largest first;
// past kMaxMicroBatchesTried of them, the powers of two and the largest.
std::vector<int64_t> micro_batches_to_try(const FitRequest& r, FitAnswer& a) {
  if (r.micro_batch_fixed) return {r.base.training.micro_batch};
  FitRequest one = r;
  one.question = FitQuestion::kMicroBatch;
  one.base.training.global_batch = one.base.training.micro_batch * one.base.parallel.dp;
  const int64_t last = std::min(kMaxMicroBatch, kMaxGlobalBatch / one.base.parallel.dp);
  Probe probe = largest(last, [&](int64_t v) {
    ++a.evaluated;
    return evaluate(one, scenario_at(one, v, 1), v);
  });
  const int64_t top = probe.below ? probe.below->value : 1;
  std::vector<int64_t> out;
  if (top <= kMaxMicroBatchesTried) {
    for (int64_t mb = top; mb >= 1; --mb) out.push_back(mb);
  } else {
    out.push_back(top);
    for (int64_t mb = int64_t{1} << 62; mb >= 1; mb /= 2)
      if (mb < top) out.push_back(mb);
  }
  return out;
}

Result<FitAnswer> global_batch_answer(const FitRequest& r, FitAnswer a, bool capped) {
  const int64_t dp = r.base.parallel.dp;
  std::optional<Probe> best;
  int64_t best_value = 0, best_mb = 0, best_last = 0;
  std::optional<FitPoint> first_miss;
  for (int64_t mb : micro_batches_to_try(r, a)) {
    FitRequest q = r;
    q.base.training.micro_batch = mb;
    const int64_t last = a.up_to / (mb * dp);
    if (last < 1) continue;
    auto at = [&](int64_t m) {
      ++a.evaluated;
      return evaluate(q, scenario_at(q, m, 0), m);
    };
    // Everything up to the cap fits when the cap does (the peak never falls): one estimate
    // instead of a probe to the largest global batch the estimate takes.
    Probe probe;
    FitPoint top = at(last);
    if (top.fits)
      probe.below = std::move(top);
    else
      probe = largest(last, at);
    if (!probe.below) {
      if (!first_miss) first_miss = probe.above;
      continue;
    }
    const int64_t value = mb * dp * probe.below->value;
    if (!probe.above && !capped) {
      // Every microbatch count fits: memory does not bound the global batch at this micro-batch.
      const int64_t from = saturation(at, last, *probe.below);
      FitPoint sat = at(from);
      a.fits = true;
      a.bounded_by = "schedule";
      a.value = mb * dp * from;
      a.step = mb * dp;
      a.micro_batch = mb;
      a.microbatches = from;
      a.scenario = scenario_json(q, sat);
      const std::string why =
          q.base.parallel.pp == 1
              ? std::string(
                    "without a pipeline, gradient accumulation runs the microbatches one "
                    "after another")
              : fmt::format("the {} schedule keeps {} in flight on {}",
                            schedule_name(q.base.parallel.schedule), sat.in_flight_microbatches,
                            sat.peak_stage);
      a.note = fmt::format(
          "memory does not bound the global batch: from {} microbatch{} per step on, the peak "
          "stays at {} ({}), so any multiple of micro-batch {} × dp {} = {} sequences from {} on "
          "fits through more gradient accumulation; give --up-to for a cap",
          from, from == 1 ? "" : "es", gib(sat.device_bytes), why, mb, dp, mb * dp, a.value);
      a.limiting = fmt::format("{}; the global batch grows with the accumulation steps for free",
                               r.micro_batch_fixed
                                   ? fmt::format("at micro-batch {} (given)", mb)
                                   : fmt::format("micro-batch {} is the largest that fits", mb));
      a.at = std::move(sat);
      a.at->value = a.value;
      return a;
    }
    if (value > best_value) {
      best_value = value;
      best_mb = mb;
      best_last = last;
      best = std::move(probe);
    }
  }
  if (!best) {
    if (!first_miss)
      return Error{"up_to", std::to_string(a.up_to),
                   fmt::format("at least micro-batch × dp = {}", r.base.training.micro_batch * dp),
                   ""};
    Probe none;
    none.above = std::move(first_miss);
    const int64_t mb = none.above->micro_batch;
    settle(r, a, std::move(none), 1, [&](int64_t m) { return mb * dp * m; });
    return a;
  }
  a.micro_batch = best_mb;
  a.microbatches = best->below->value;
  a.step = best_mb * dp;
  settle(r, a, std::move(*best), best_last, [&](int64_t m) { return best_mb * dp * m; });
  a.note =
      fmt::format("micro-batch {} × dp {} × {} microbatches per step", best_mb, dp, a.microbatches);
  if (r.micro_batch_fixed)
    a.note += " (the micro-batch given)";
  else
    a.note += "; every micro-batch up to the largest that fits was tried";
  return a;
}

}  // namespace

int64_t fit_limit_bytes(const Gpu& gpu, double headroom) {
  return static_cast<int64_t>(std::floor(gpu.usable_bytes * (1.0 - headroom)));
}

int64_t seq_len_step(const Parallelism& p, int64_t seq_multiple) {
  int64_t step = std::max<int64_t>(1, seq_multiple);
  if (p.cp > 1) step = std::lcm(step, 2 * p.cp);
  if (p.tp > 1 && p.sequence_parallel) step = std::lcm(step, p.tp * p.cp);
  return step;
}

FitPoint fit_point(const FitRequest& request, int64_t value) {
  const int64_t m =
      request.question == FitQuestion::kMicroBatch ? base_microbatches(request.base) : 0;
  return evaluate(request, scenario_at(request, value, m), value);
}

Result<FitAnswer> fit(const FitRequest& r) {
  const auto start = std::chrono::steady_clock::now();
  if (auto e = check_request(r)) return *e;
  if (r.question != FitQuestion::kGpus) {
    // The sequence-length question checks the layout at its first step, not at the base's
    // sequence length, which it replaces.
    Scenario first = r.base;
    if (r.question == FitQuestion::kSeqLen)
      first.training.seq_len = seq_len_step(r.base.parallel, r.seq_multiple);
    if (auto e = validate_scenario(first)) return *e;
  }
  FitAnswer a;
  a.question = r.question;
  a.model = r.base.model.name;
  a.gpu = r.gpu;
  a.headroom = r.headroom;
  a.limit_bytes = fit_limit_bytes(r.gpu, r.headroom);
  const bool capped = r.up_to > 0;
  Result<FitAnswer> out = [&]() -> Result<FitAnswer> {
    switch (r.question) {
      case FitQuestion::kMicroBatch:
        a.up_to = capped ? r.up_to : kMaxMicroBatch;
        return micro_batch_answer(r, std::move(a));
      case FitQuestion::kSeqLen:
        a.up_to = capped ? r.up_to : kMaxSeqLen;
        return seq_len_answer(r, std::move(a));
      case FitQuestion::kGlobalBatch:
        a.up_to = capped ? r.up_to : kMaxGlobalBatch;
        return global_batch_answer(r, std::move(a), capped);
      case FitQuestion::kGpus:
        break;
    }
    return fit_gpu_count(r, std::move(a));
  }();
  if (!out) return out;
  FitAnswer answer = std::move(out).value();
  answer.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return answer;
}

}  // namespace vramplan
