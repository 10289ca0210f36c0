// Speed of the serving estimate: estimate_inference() with and without formula strings (a
// planner over serving layouts calls it per candidate with explain off), and resolving the
// settings (config.json and quantization_config parsing).
//
//   build/inference_bench [--benchmark_filter=Capacity]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "vramplan/io/inference_settings.h"
#include "vramplan/serving/inference.h"

namespace {

using nlohmann::json;

vramplan::InferenceScenario scenario_from(const json& settings) {
  vramplan::Result<vramplan::ResolvedInference> resolved =
      vramplan::resolve_inference(settings, nullptr);
  if (!resolved) {
    std::cerr << "inference_bench: " << settings.dump() << ": " << resolved.error().message()
              << "\n";
    std::exit(1);
  }
  return resolved->scenario;
}

void run(benchmark::State& state, const json& settings, bool explain) {
  const vramplan::InferenceScenario s = scenario_from(settings);
  for (auto _ : state) {
    auto e = vramplan::estimate_inference(s, {.explain = explain});
    benchmark::DoNotOptimize(e);
  }
}

void BM_Llama8B_Capacity(benchmark::State& state) {
  run(state, {{"model", "Llama-3.1-8B"}, {"context", 8192}, {"gpu_memory_utilization", 0.9}},
      state.range(0) != 0);
}
BENCHMARK(BM_Llama8B_Capacity)->Arg(0)->Arg(1)->ArgName("explain");

void BM_DeepSeekV3_Pp4Tp8_Capacity(benchmark::State& state) {
  run(state,
      {{"model", "DeepSeek-V3"},
       {"tp", 8},
       {"pp", 4},
       {"context", 32768},
       {"gpu", "h200-141gb"},
       {"gpu_memory_utilization", 0.9}},
      state.range(0) != 0);
}
BENCHMARK(BM_DeepSeekV3_Pp4Tp8_Capacity)->Arg(0)->Arg(1)->ArgName("explain");

void BM_ResolveGptOss(benchmark::State& state) {
  const json settings = {{"model", "gpt-oss-120b"}, {"kv_dtype", "fp8"}};
  for (auto _ : state) {
    auto r = vramplan::resolve_inference(settings, nullptr);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ResolveGptOss);

}  // namespace

BENCHMARK_MAIN();
