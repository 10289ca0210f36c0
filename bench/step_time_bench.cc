// Speed of the step-time model: StepTimeModel::evaluate() is what the planner calls for every
// layout that fits, so evaluations per second bound how many layouts it can rank. Also prepare()
// (once per model and cluster), the per-op roofline report, and the throughput validation suite.
//
//   build/step_time_bench [--benchmark_filter=Evaluate]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "validation/throughput/throughput_validation.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/perf/roofline.h"
#include "vramplan/perf/step_time.h"

namespace {

using nlohmann::json;

const vramplan::FileReader kNoFiles;

vramplan::Scenario scenario_from(const json& settings) {
  vramplan::Result<vramplan::ResolvedScenario> resolved =
      vramplan::resolve_scenario(settings, kNoFiles);
  if (!resolved) {
    std::cerr << "step_time_bench: " << settings.dump() << ": " << resolved.error().message()
              << "\n";
    std::exit(1);
  }
  return resolved->scenario;
}

const vramplan::Gpu& h100() { return *vramplan::builtin_gpus().find("h100-80gb"); }

json llama8b() { return {{"model", "Llama-3.1-8B"}, {"gpus", 64}, {"global_batch", 512}}; }
// 126 layers over pp 9 × vpp 2 = 18 chunks of 7.
json llama405b() {
  return {{"model", "Llama-3.1-405B"}, {"gpus", 1152},         {"tp", 8},  {"pp", 9}, {"vpp", 2},
          {"schedule", "interleaved"}, {"global_batch", 1152}, {"zero", 1}};
}
json deepseek_v3() {
  return {{"model", "DeepSeek-V3"},
          {"gpus", 2048},
          {"pp", 16},
          {"ep", 64},
          {"first_stage_layers", 4},
          {"last_stage_layers", 1},
          {"global_batch", 4096},
          {"recompute", "selective"}};
}

// A stream of layouts that differ the way the planner's do: TP, micro-batch and recompute change
// between calls, so nothing is served from a cache.
void BM_Evaluate(benchmark::State& state, json settings) {
  const vramplan::Scenario base = scenario_from(settings);
  vramplan::Result<vramplan::StepTimeModel> model =
      vramplan::StepTimeModel::prepare(base, h100(), vramplan::default_cluster(h100()));
  if (!model) {
    state.SkipWithError(model.error().message().c_str());
    return;
  }
  vramplan::Scenario layouts[4] = {base, base, base, base};
  layouts[1].training.recompute = vramplan::Recompute::kSelective;
  layouts[2].training.micro_batch = 2;
  layouts[3].training.recompute = vramplan::Recompute::kFull;
  size_t i = 0;
  for (auto _ : state) {
    vramplan::StepTime t = model->evaluate(layouts[i++ & 3]);
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("evaluations");
}
BENCHMARK_CAPTURE(BM_Evaluate, Llama_3_1_8B_64gpus, llama8b());
BENCHMARK_CAPTURE(BM_Evaluate, Llama_3_1_405B_tp8_pp9_vpp2, llama405b());
BENCHMARK_CAPTURE(BM_Evaluate, DeepSeekV3_pp16_ep64, deepseek_v3());

void BM_Prepare(benchmark::State& state, json settings) {
  const vramplan::Scenario base = scenario_from(settings);
  for (auto _ : state) {
    auto model = vramplan::StepTimeModel::prepare(base, h100(), vramplan::default_cluster(h100()));
    benchmark::DoNotOptimize(model);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_Prepare, Llama_3_1_8B, llama8b());
BENCHMARK_CAPTURE(BM_Prepare, DeepSeekV3, deepseek_v3());

void BM_Roofline(benchmark::State& state, json settings) {
  const vramplan::Scenario scenario = scenario_from(settings);
  for (auto _ : state) {
    auto roofline = vramplan::compute_roofline(scenario, h100());
    benchmark::DoNotOptimize(roofline);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_Roofline, Llama_3_1_8B, llama8b());

// All 1,758 runs of the Ultra-Scale sweep predicted and summarised.
void BM_ValidateThroughput(benchmark::State& state) {
  for (auto _ : state) {
    auto report = vramplan::validate_throughput();
    benchmark::DoNotOptimize(report);
  }
  state.SetItemsProcessed(state.iterations() * 1758);
}
BENCHMARK(BM_ValidateThroughput)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
