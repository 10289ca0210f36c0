// Speed of the planner: one layout's peak memory by the fast path against estimate(), the full
// search of Llama-3.1-405B on 1,024 H100s (seq 8192, global batch 2048) with memory only (every
// layout that fits timed by a constant, to see enumeration + memory alone) and with the real
// step-time model (plan()), on one thread and on all cores; the same plan for DeepSeek-V3 on
// 1,024 GPUs (seq 4096, global batch 1024), a large MoE space; each plan also with its space of
// fitting layouts collected (BM_PlanSpace_*). Counters:
//   layouts_per_s   valid layouts decided per second (evaluated / wall time)
//   peaks_per_s     peaks actually computed per second (evaluated minus those ruled out by the
//                   branch bound)
//
//   build/planner_bench [--benchmark_filter=Search]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "plan/planner_search.h"
#include "training/fast/fast_memory.h"
#include "vramplan/io/plan_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/plan/planner.h"
#include "vramplan/training/estimate.h"

namespace {

using nlohmann::json;

const vramplan::FileReader kNoFiles;

json llama405b_settings() {
  return {{"model", "Llama-3.1-405B"}, {"gpus", 1024}, {"seq_len", 8192}, {"global_batch", 2048}};
}

// A large MoE space: 61 layers (dense and MoE kinds, MTP), experts, expert TP.
json deepseek_v3_settings() {
  return {{"model", "DeepSeek-V3"}, {"gpus", 1024}, {"seq_len", 4096}, {"global_batch", 1024}};
}

vramplan::PlanRequest request_or_exit(const json& settings) {
  vramplan::Result<vramplan::PlanRequest> r =
      vramplan::plan_request_from_settings(settings, kNoFiles);
  if (!r) {
    std::cerr << "planner_bench: " << r.error().message() << "\n";
    std::exit(1);
  }
  return *r;
}

// Ranks nothing: every layout that fits gets the same speed. Isolates enumeration and memory.
class ConstantTimer final : public vramplan::LayoutTimer {
 public:
  vramplan::StepTime time(const vramplan::Scenario&) const override {
    vramplan::StepTime t;
    t.step_time_s = 1;
    t.tokens_per_s_per_gpu = 1;
    return t;
  }
};

void report(benchmark::State& state, int64_t evaluated, int64_t computed, int64_t fitting) {
  const double per_iteration = 1.0 / static_cast<double>(state.iterations());
  state.counters["layouts"] = static_cast<double>(evaluated) * per_iteration;
  state.counters["fitting"] = static_cast<double>(fitting) * per_iteration;
  state.counters["layouts_per_s"] =
      benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
  state.counters["peaks_per_s"] =
      benchmark::Counter(static_cast<double>(computed), benchmark::Counter::kIsRate);
}

void BM_SearchMemoryOnly_405B(benchmark::State& state) {
  vramplan::PlanRequest r = request_or_exit(llama405b_settings());
  r.threads = static_cast<int>(state.range(0));
  vramplan::Result<vramplan::FastMemoryModel> memory = vramplan::FastMemoryModel::prepare(r.base);
  const int64_t limit = static_cast<int64_t>(r.gpu.usable_bytes * (1 - r.headroom));
  const ConstantTimer timer;
  int64_t evaluated = 0, computed = 0, fitting = 0;
  for (auto _ : state) {
    vramplan::SearchResult found = vramplan::search_layouts(r, *memory, timer, limit);
    evaluated += found.stats.evaluated;
    computed += found.stats.memory_computed;
    fitting += found.stats.fitting;
    benchmark::DoNotOptimize(found);
  }
  report(state, evaluated, computed, fitting);
}
BENCHMARK(BM_SearchMemoryOnly_405B)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

// The whole plan: search with the step-time model, explanations, estimate() of the top five.
// `space` > 0 also collects the space of fitting layouts (planner.md "The space"), as the Plan
// view asks for it (1,500 points): its cost is the difference from the same plan without.
void run_plan(benchmark::State& state, const json& settings, int64_t space) {
  vramplan::PlanRequest r = request_or_exit(settings);
  r.threads = static_cast<int>(state.range(0));
  r.space_points = space;
  int64_t evaluated = 0, computed = 0, fitting = 0, shown = 0;
  for (auto _ : state) {
    vramplan::Result<vramplan::PlanResult> p = vramplan::plan(r);
    if (!p) {
      state.SkipWithError(p.error().message().c_str());
      return;
    }
    evaluated += p->stats.evaluated;
    computed += p->stats.memory_computed;
    fitting += p->stats.fitting;
    if (p->space) shown += static_cast<int64_t>(p->space->points.size());
    benchmark::DoNotOptimize(p);
  }
  report(state, evaluated, computed, fitting);
  if (space > 0)
    state.counters["space_shown"] =
        static_cast<double>(shown) / static_cast<double>(state.iterations());
}

constexpr int64_t kViewSpace = 1500;  // web/src/views/plan/space_data.ts SPACE_POINTS

void BM_Plan_405B(benchmark::State& state) { run_plan(state, llama405b_settings(), 0); }
BENCHMARK(BM_Plan_405B)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_PlanSpace_405B(benchmark::State& state) {
  run_plan(state, llama405b_settings(), kViewSpace);
}
BENCHMARK(BM_PlanSpace_405B)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

// The whole plan of DeepSeek-V3 on 1,024 GPUs: layouts/s with the step-time model.
void BM_Plan_DeepSeekV3(benchmark::State& state) { run_plan(state, deepseek_v3_settings(), 0); }
BENCHMARK(BM_Plan_DeepSeekV3)
    ->Arg(1)
    ->Arg(0)
    ->UseRealTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_PlanSpace_DeepSeekV3(benchmark::State& state) {
  run_plan(state, deepseek_v3_settings(), kViewSpace);
}
BENCHMARK(BM_PlanSpace_DeepSeekV3)
    ->Arg(1)
    ->Arg(0)
    ->UseRealTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// One layout's peak: the fast path against estimate() without formulas.
vramplan::Scenario llama405b_layout() {
  vramplan::PlanRequest r = request_or_exit(llama405b_settings());
  vramplan::Scenario s = r.base;
  s.parallel.tp = 8;
  s.parallel.pp = 16;
  s.parallel.dp = 8;
  s.parallel.first_stage_layers = 7;
  s.parallel.last_stage_layers = 7;
  s.parallel.distributed_optimizer = true;
  s.training.recompute = vramplan::Recompute::kSelective;
  return s;
}

void BM_FastMemoryEvaluate(benchmark::State& state) {
  const vramplan::Scenario s = llama405b_layout();
  vramplan::Result<vramplan::FastMemoryModel> memory = vramplan::FastMemoryModel::prepare(s);
  for (auto _ : state) benchmark::DoNotOptimize(memory->evaluate(s));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FastMemoryEvaluate);

void BM_EstimatePeak(benchmark::State& state) {
  const vramplan::Scenario s = llama405b_layout();
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::estimate(s, {.explain = false}));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimatePeak);

}  // namespace

BENCHMARK_MAIN();
