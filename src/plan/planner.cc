// plan(): request checks, the memory and step-time models prepared once, the search, and the
// winner explained against the popular layout families.
#include "vramplan/plan/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <memory>

#include "perf/step_time_offload.h"
#include "plan/planner_offload.h"
#include "plan/planner_search.h"
#include "training/fast/fast_memory.h"
#include "training/scenario_checks.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int64_t kMaxGpus = int64_t{1} << 24;  // scenario_checks.cc's largest world
constexpr int64_t kMaxSpacePoints = 100000;     // the space's sample (PlanRequest::space_points)

class StepTimeTimer final : public LayoutTimer {
 public:
  explicit StepTimeTimer(const StepTimeModel& model) : model_(model) {}
  StepTime time(const Scenario& layout) const override { return model_.evaluate(layout); }
  std::unique_ptr<LayoutTimer> for_thread() const override {
    return std::make_unique<CachingTimer>(model_);
  }

 private:
  // One search thread's: the inner loops (pp, vpp, schedule, dp, sharding, recomputation) reuse
  // the section times of the layout before (StepTimeCache); the times are the same.
  class CachingTimer final : public LayoutTimer {
   public:
    explicit CachingTimer(const StepTimeModel& model) : model_(model) {}
    StepTime time(const Scenario& layout) const override { return model_.evaluate(layout, cache_); }
    std::optional<StepTime> time_unless_slower(const Scenario& layout,
                                               double tokens_floor) const override {
      return model_.evaluate_unless_slower(layout, cache_, tokens_floor);
    }
    // The bound reads the slowest rank's microbatches and the tokens a step processes, neither
    // of which depends on the sharding (the StepTimeCache keeps the slowest rank across
    // shardings).
    bool skips_regardless_of_sharding() const override { return true; }

   private:
    const StepTimeModel& model_;
    mutable StepTimeCache cache_;
  };
  const StepTimeModel& model_;
};

// The base with a neutral layout (one GPU, micro-batch 1): what the memory and step-time models
// are prepared from, whatever layout values the request fixed.
Scenario on_one_gpu(const Scenario& base) {
  Scenario s = base;
  s.offload = Offload{};  // runs on no single unsharded GPU: checked per sharding in the search
  s.parallel = Parallelism{};
  s.parallel.fsdp_prefetch = base.parallel.fsdp_prefetch;
  s.training.micro_batch = 1;
  s.training.recompute = base.training.recompute_layers > 0 ? Recompute::kFull : Recompute::kNone;
  return s;
}

std::optional<Error> check_request(const PlanRequest& r) {
  using std::to_string;
  if (r.gpus < 1 || r.gpus > kMaxGpus)
    return Error{"gpus", to_string(r.gpus), "an integer from 1 to " + to_string(kMaxGpus), ""};
  if (r.cluster.gpus_per_node < 1 || r.cluster.gpus_per_node > 4096)
    return Error{"gpus_per_node", to_string(r.cluster.gpus_per_node), "an integer from 1 to 4096",
                 ""};
  if (r.max_tp < 0 || r.max_tp > kMaxGpus)
    return Error{"max_tp", to_string(r.max_tp), "an integer from 1 to " + to_string(kMaxGpus), ""};
  if (!std::isfinite(r.headroom) || r.headroom < 0 || r.headroom > 0.9)
    return Error{"headroom", fmt::format("{}", r.headroom),
                 "a fraction of usable memory kept free, from 0 to 0.9", ""};
  if (r.top_k < 1 || r.top_k > 1000)
    return Error{"top", to_string(r.top_k), "an integer from 1 to 1000", ""};
  if (r.threads < 0 || r.threads > 1024)
    return Error{"threads", to_string(r.threads), "0 (all cores) to 1024", ""};
  if (r.space_points < 0 || r.space_points > kMaxSpacePoints)
    return Error{"space", to_string(r.space_points),
                 "0 (not collected) to " + to_string(kMaxSpacePoints) + " points", ""};
  if (r.base.training.global_batch < 1)
    return Error{"global_batch", to_string(r.base.training.global_batch),
                 "a positive number of sequences per optimizer step",
                 "the planner compares layouts at a fixed global batch"};
  if (r.gpu.usable_bytes <= 0) return Error{"gpu", r.gpu.id, "a GPU with a known memory size", ""};
  // The training settings themselves (sequence length, sizes, overheads) on one GPU.
  return validate_scenario(on_one_gpu(r.base));
}

template <class T>
T first_or(const std::vector<T>& list, T fallback) {
  return list.empty() ? fallback : list.front();
}

// A scenario on one GPU with a single fixed value set, to check it on its own.
std::optional<Error> alone(const PlanRequest& r, void (*set)(const PlanRequest&, Scenario&)) {
  Scenario s = on_one_gpu(r.base);
  set(r, s);
  return validate_scenario(s);
}

// No layout survives the fixed dimensions: name the value to change. First the fixed values
// that are wrong on their own (tp against the heads, cp against the sequence, the micro-batch
// against the global batch), then the GPU count and max_tp, then scenario_checks.cc on all
// together.
Error explain_empty_space(const PlanRequest& r) {
  const PlanSpace& sp = r.space;
  if (!sp.tp.empty())
    if (auto e = alone(r, [](const PlanRequest& q, Scenario& s) { s.parallel.tp = q.space.tp[0]; }))
      return *e;
  if (!sp.cp.empty())
    if (auto e = alone(r, [](const PlanRequest& q, Scenario& s) { s.parallel.cp = q.space.cp[0]; }))
      return *e;
  if (!sp.micro_batch.empty())
    if (auto e = alone(r, [](const PlanRequest& q, Scenario& s) {
          s.training.micro_batch = q.space.micro_batch[0];
        }))
      return *e;
  const int64_t max_tp = r.max_tp > 0 ? r.max_tp : r.cluster.gpus_per_node;
  PlanLayout l;
  l.tp = first_or<int64_t>(sp.tp, 1);
  l.pp = first_or<int64_t>(sp.pp, 1);
  l.cp = first_or<int64_t>(sp.cp, 1);
  const int64_t model_parallel = l.tp * l.pp * l.cp;
  l.dp = first_or<int64_t>(sp.dp, std::max<int64_t>(1, r.gpus / model_parallel));
  if (r.gpus % model_parallel != 0 || l.dp * model_parallel != r.gpus)
    return Error{"gpus", std::to_string(r.gpus),
                 fmt::format("a multiple of tp·pp·cp = {}{}", model_parallel,
                             sp.dp.empty() ? "" : fmt::format(", times dp = {}", l.dp)),
                 "the GPUs must factor as tp·pp·cp·dp"};
  l.etp = first_or<int64_t>(sp.etp, 1);
  if (l.tp > max_tp || l.etp > max_tp)
    return Error{l.tp > max_tp ? "tp" : "etp", std::to_string(std::max(l.tp, l.etp)),
                 fmt::format("at most max_tp = {}", max_tp),
                 "tensor parallelism stays within max_tp (raise it with --max-tp)"};
  l.vpp = first_or<int64_t>(sp.vpp, 1);
  l.schedule = first_or(sp.schedule, l.vpp > 1 ? Schedule::kInterleaved : Schedule::k1F1B);
  l.sequence_parallel = first_or(sp.sequence_parallel, l.tp > 1);
  l.ep = first_or<int64_t>(sp.ep, 1);
  l.micro_batch = first_or<int64_t>(sp.micro_batch, 1);
  l.recompute = first_or(sp.recompute, Recompute::kNone);
  l.sharding = {first_or<int64_t>(sp.zero, 0), first_or(sp.fsdp, FsdpMode::kNone),
                first_or<int64_t>(sp.fsdp_shard_group, 0),
                first_or(sp.distributed_optimizer, false)};
  l.offload = r.base.offload;
  if (sp.fixed_split)
    l.split = *sp.fixed_split;
  else if (!sp.split.empty())
    l.split.kind = sp.split.front();  // the framework's kinds
  Scenario s = r.base;
  apply_layout(l, s);
  if (auto e = validate_scenario(s)) return *e;
  return Error{"gpus", std::to_string(r.gpus),
               "a GPU count, max_tp and fixed dimensions that leave at least one valid layout",
               "no valid layout satisfies every fixed dimension together"};
}

std::string with_commas(double value) {
  const std::string digits = fmt::format("{:.0f}", value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

std::string gib(int64_t bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

// The step-time component that grows most from the winner to `other`.
std::string main_cost(const StepTime& winner, const StepTime& other) {
  const std::pair<const char*, double> deltas[] = {
      {"compute", other.compute_s - winner.compute_s},
      {"recomputation", other.recompute_s - winner.recompute_s},
      {"tensor-parallel communication", other.tp_comm_s - winner.tp_comm_s},
      {"context-parallel communication", other.cp_comm_s - winner.cp_comm_s},
      {"expert all-to-all", other.ep_comm_s - winner.ep_comm_s},
      {"CPU-bound kernel launches", other.cpu_bound_s - winner.cpu_bound_s},
      {"pipeline bubble", other.pp_bubble_s - winner.pp_bubble_s},
      {"exposed data-parallel communication", other.dp_comm_exposed_s - winner.dp_comm_exposed_s},
      {"optimizer step", other.optimizer_s - winner.optimizer_s},
      {"offload transfers and CPU optimizer step", other.offload_s - winner.offload_s}};
  const auto* top = &deltas[0];
  for (const auto& d : deltas)
    if (d.second > top->second) top = &d;
  if (top->second <= 0) return "";
  return fmt::format(" (more {}: +{:.3g} s per step)", top->first, top->second);
}

std::string step_parts(const StepTime& t) {
  const std::pair<const char*, double> parts[] = {
      {"compute", t.compute_s},           {"recompute", t.recompute_s},
      {"TP comm", t.tp_comm_s},           {"CP comm", t.cp_comm_s},
      {"EP all-to-all", t.ep_comm_s},     {"CPU-bound", t.cpu_bound_s},
      {"pipeline bubble", t.pp_bubble_s}, {"exposed DP comm", t.dp_comm_exposed_s},
      {"optimizer", t.optimizer_s},       {"offload", t.offload_s}};
  std::string text;
  for (const auto& [name, seconds] : parts) {
    if (seconds <= 0) continue;
    text += fmt::format("{}{} {:.3g} s", text.empty() ? "" : ", ", name, seconds);
  }
  return text;
}

std::string explain_winner(const PlanResult& p) {
  const PlanCandidate& w = p.candidates.front();
  std::string text = fmt::format(
      "{} wins: {} tokens/s per GPU (MFU {:.1f}%), a step of {:.3g} s ({}), peak {} of the {} "
      "limit.",
      layout_name(w.layout), with_commas(w.time.tokens_per_s_per_gpu), w.time.mfu * 100,
      w.time.step_time_s, step_parts(w.time), gib(w.device_bytes), gib(p.limit_bytes));
  if (w.layout.offload.any())
    text += fmt::format(" It keeps {} per rank in host memory.", gib(w.host_bytes));
  for (const FamilyOutcome& f : p.families) {
    std::string name = family_name(f.family);
    name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
    text += fmt::format(" {}: ", name);
    if (in_family(w.layout, f.family)) {
      text += "the winner is one.";
    } else if (f.best) {
      const double slower =
          (1 - f.best->time.tokens_per_s_per_gpu / w.time.tokens_per_s_per_gpu) * 100;
      if (slower < 0.05)
        text += fmt::format("its best, {}, is as fast (the tie goes to less memory).",
                            layout_name(f.best->layout));
      else
        text += fmt::format("its best, {}, is {:.1f}% slower{}.", layout_name(f.best->layout),
                            slower, main_cost(w.time, f.best->time));
    } else if (f.closest_miss) {
      text += fmt::format("does not fit by {}: its closest, {}, needs {}.",
                          gib(f.closest_miss->device_bytes - p.limit_bytes),
                          layout_name(f.closest_miss->layout), gib(f.closest_miss->device_bytes));
    } else {
      text += "no valid layout in the searched space.";
    }
  }
  return text;
}

std::vector<std::string> suggestions(const PlanRequest& r, const PlanResult& p) {
  std::vector<std::string> out;
  const PlanCandidate& miss = *p.closest_miss;
  if (miss.device_bytes <= p.gpu.usable_bytes) {
    const double needed = 1.0 - static_cast<double>(miss.device_bytes) / p.gpu.usable_bytes;
    out.push_back(fmt::format(
        "it fits in the GPU's {} without headroom: --headroom {:.3f} would admit it (less margin "
        "for fragmentation and spikes)",
        gib(p.gpu.usable_bytes), std::floor(needed * 1000) / 1000));
  }
  out.push_back("more GPUs (--gpus): model states shard over more ranks");
  out.push_back("a GPU with more memory (--gpu; see `vramplan gpus`)");
  // The user's own flags, not the lists a framework fills in (framework_layouts.h).
  const bool fixed = std::any_of(
      std::begin(kPlanLayoutKeys), std::end(kPlanLayoutKeys),
      [&](const char* key) { return r.settings.is_object() && r.settings.contains(key); });
  if (fixed)
    out.push_back(
        "leave out the fixed layout flags (--tp, --pp, --zero, ...) to let the planner "
        "choose them");
  if (r.base.framework_id >= 0)
    out.push_back(fmt::format(
        "without --framework {} the search also covers layouts that framework cannot run",
        framework_name(static_cast<Framework>(r.base.framework_id))));
  if (p.max_tp < r.gpus)
    out.push_back(
        fmt::format("tensor parallelism beyond {} GPUs (--max-tp), if the network "
                    "allows it",
                    p.max_tp));
  out.push_back("a shorter sequence (--seq-len) or fewer sequences per step (--global-batch)");
  return out;
}

// The reported candidates, with their peak stage as estimate() names it.
void fill_peak_stages(const Scenario& base, std::vector<PlanCandidate>& candidates) {
  Scenario s = base;
  for (PlanCandidate& c : candidates) {
    apply_layout(c.layout, s);
    Result<Estimate> est = estimate(s, {.explain = false});
    if (!est.ok()) continue;
    c.peak_stage = est->stages[est->peak.stage].name;
    c.peak_stage_index = static_cast<int64_t>(est->peak.stage);
  }
}

// The offload pass (PlanRequest::offload_search) after a first search that fitted nothing: what
// it finds replaces the empty result (keeping the first search's counts), and the note says what
// was tried.
std::optional<Error> offload_pass(const PlanRequest& r, const Scenario& neutral,
                                  const LayoutTimer& timer, PlanResult& p, SearchResult& found) {
  OffloadSearch offloaded = search_with_offload(r, neutral, timer, p.limit_bytes);
  if (offloaded.found.stopped)
    return Error{"search", "stopped in the offload pass", "a search that runs to its end",
                 "the search was stopped before its end (time budget or cancellation)"};
  p.offload_searched = true;
  const std::optional<PlanCandidate>& miss = found.closest_miss;
  p.offload_note =
      fmt::format("No layout fits with everything on the GPU{}. {}",
                  miss ? fmt::format(" (the closest, {}, needs {})", layout_name(miss->layout),
                                     gib(miss->device_bytes))
                       : "",
                  offloaded.note);
  if (offloaded.found.top.empty()) {
    add_stats(found.stats, offloaded.found.stats);
    return std::nullopt;
  }
  const int threads = found.stats.threads;
  merge_search(offloaded.found, found, r.top_k);  // the first search's counts; it fitted nothing
  found = std::move(offloaded.found);
  found.stats.threads = threads;
  settle_misses(found);
  return std::nullopt;
}

}  // namespace

Result<PlanResult> plan(const PlanRequest& r) {
  if (auto e = check_request(r)) return *e;
  if (auto e = offload_bandwidth_error(r.base, r.cluster)) return *e;
  const Scenario neutral = on_one_gpu(r.base);
  Scenario memory_base = neutral;  // offload takes the search to estimate() (fast_memory.cc)
  memory_base.offload = r.base.offload;
  Result<FastMemoryModel> memory = FastMemoryModel::prepare(memory_base);
  if (!memory) return memory.error();
  Result<StepTimeModel> speed = StepTimeModel::prepare(neutral, r.gpu, r.cluster);
  if (!speed) return speed.error();
  PlanResult p;
  p.model = r.base.model.name;
  p.gpu = r.gpu;
  p.cluster = r.cluster;
  p.gpus = r.gpus;
  p.max_tp = r.max_tp > 0 ? r.max_tp : r.cluster.gpus_per_node;
  p.headroom = r.headroom;
  p.limit_bytes = static_cast<int64_t>(std::floor(r.gpu.usable_bytes * (1.0 - r.headroom)));
  p.global_batch = r.base.training.global_batch;
  p.seq_len = r.base.training.seq_len;
  p.settings = r.settings;
  p.imported = r.imported;

  const auto start = std::chrono::steady_clock::now();
  const StepTimeTimer timer(*speed);
  SearchResult found = search_layouts(r, *memory, timer, p.limit_bytes);
  found.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (found.stopped)
    return Error{"search", fmt::format("stopped after {} layouts", found.stats.evaluated),
                 "a search that runs to its end",
                 "the search was stopped before its end (time budget or cancellation)"};
  if (found.stats.evaluated == 0) return explain_empty_space(r);

  if (found.top.empty() && r.offload_search && !r.base.offload.any()) {
    if (auto e = offload_pass(r, neutral, timer, p, found)) return *e;
    found.stats.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  p.stats = found.stats;
  p.candidates = std::move(found.top);
  fill_peak_stages(r.base, p.candidates);
  if (found.space && !p.candidates.empty()) p.space = found.space->finish(p.candidates);
  for (int f = 0; f < kFamilies; ++f) {
    const Family family = static_cast<Family>(f);
    if (family == Family::kExpert && !r.base.model.is_moe()) continue;
    p.families.push_back({family, found.family_best[f], found.family_miss[f]});
  }
  if (p.candidates.empty()) {
    p.closest_miss = found.closest_miss;
    if (p.closest_miss) p.suggestions = suggestions(r, p);
  } else {
    p.why = (p.offload_searched ? p.offload_note + " " : "") + explain_winner(p);
  }
  return p;
}

}  // namespace vramplan
