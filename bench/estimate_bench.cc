// Speed of the estimate's hot paths: estimate() with and without formula strings (the planner
// calls it per candidate layout with explain off), the whole call from settings, resolving a
// scenario from settings (parsing a preset's config.json), and counting parameters.
//
//   build/estimate_bench [--benchmark_filter=Explain]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/io/estimate_request.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/params.h"
#include "vramplan/model/presets.h"
#include "vramplan/report/settings_report.h"
#include "vramplan/training/estimate.h"

namespace {

using nlohmann::json;

// The benchmarks read no files: models come from the compiled-in presets.
const vramplan::FileReader kNoFiles;

// Resolves settings or stops the program: a benchmark of an error path would measure nothing.
vramplan::Scenario scenario_from(const json& settings) {
  vramplan::Result<vramplan::ResolvedScenario> resolved =
      vramplan::resolve_scenario(settings, kNoFiles);
  if (!resolved) {
    std::cerr << "estimate_bench: " << settings.dump() << ": " << resolved.error().message()
              << "\n";
    std::exit(1);
  }
  return resolved->scenario;
}

json llama_settings() { return {{"model", "Llama-3.1-8B"}}; }

// DeepSeek-V3's 61 layers over 16 stages: 4 on the first, 1 on the last, 4 on each other.
json deepseek_pp16_settings() {
  return {{"model", "DeepSeek-V3"},
          {"pp", 16},
          {"ep", 8},
          {"gpus", 128},
          {"first_stage_layers", 4},
          {"last_stage_layers", 1},
          {"recompute", "selective"}};
}

void run_estimates(benchmark::State& state, const vramplan::Scenario& scenario, bool explain) {
  const vramplan::EstimateOptions options{.explain = explain};
  for (auto _ : state) {
    vramplan::Result<vramplan::Estimate> result = vramplan::estimate(scenario, options);
    if (!result) {
      state.SkipWithError(result.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EstimateNoExplain(benchmark::State& state) {
  const vramplan::Scenario scenario = scenario_from(llama_settings());
  run_estimates(state, scenario, /*explain=*/false);
}
BENCHMARK(BM_EstimateNoExplain);

void BM_EstimateExplain(benchmark::State& state) {
  const vramplan::Scenario scenario = scenario_from(llama_settings());
  run_estimates(state, scenario, /*explain=*/true);
}
BENCHMARK(BM_EstimateExplain);

void BM_EstimateDeepSeekV3_PP16(benchmark::State& state) {
  const vramplan::Scenario scenario = scenario_from(deepseek_pp16_settings());
  run_estimates(state, scenario, /*explain=*/false);
}
BENCHMARK(BM_EstimateDeepSeekV3_PP16);

// The whole settings-to-estimate call that `vramplan estimate`, POST /api/estimate and Python's
// vramplan.estimate make (resolve, estimate, the fit table, the host check), with formulas
// (explain) on or off ("formulas": false); no JSON written. docs/python.md sets the Python call's
// cost beside these.
void BM_EstimateSettings(benchmark::State& state, json settings) {
  for (auto _ : state) {
    vramplan::Result<vramplan::SettingsEstimate> result =
        vramplan::estimate_settings(settings, kNoFiles);
    if (!result) {
      state.SkipWithError(result.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_EstimateSettings, NoFormulas,
                  json{{"model", "Llama-3.1-8B"}, {"formulas", false}});
BENCHMARK_CAPTURE(BM_EstimateSettings, Formulas, llama_settings());

// The same, answered as the JSON text `vramplan estimate --format json` prints (compact): what
// the server and the Python module hand back.
void BM_EstimateSettingsJson(benchmark::State& state, json settings) {
  for (auto _ : state) {
    vramplan::Result<vramplan::SettingsEstimate> result =
        vramplan::estimate_settings(settings, kNoFiles);
    if (!result) {
      state.SkipWithError(result.error().message().c_str());
      break;
    }
    std::string text = vramplan::settings_estimate_to_json(*result).dump();
    benchmark::DoNotOptimize(text);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_EstimateSettingsJson, NoFormulas,
                  json{{"model", "Llama-3.1-8B"}, {"formulas", false}});
BENCHMARK_CAPTURE(BM_EstimateSettingsJson, Formulas, llama_settings());

// Settings to Scenario: preset lookup, config.json parsing, overrides, default batch.
void BM_ResolveScenario(benchmark::State& state, json settings) {
  for (auto _ : state) {
    vramplan::Result<vramplan::ResolvedScenario> resolved =
        vramplan::resolve_scenario(settings, kNoFiles);
    if (!resolved) {
      state.SkipWithError(resolved.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(resolved);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_ResolveScenario, Llama_3_1_8B, llama_settings());
BENCHMARK_CAPTURE(BM_ResolveScenario, DeepSeekV3_PP16, deepseek_pp16_settings());

void BM_CountParameters(benchmark::State& state, const char* preset_name) {
  const vramplan::Preset* preset = vramplan::find_preset(preset_name);
  if (preset == nullptr) {
    state.SkipWithError("no such preset");
    return;
  }
  vramplan::Result<vramplan::ParsedModel> parsed =
      vramplan::parse_hf_config(preset->config, preset->name);
  if (!parsed) {
    state.SkipWithError(parsed.error().message().c_str());
    return;
  }
  const vramplan::ModelConfig& model = parsed->model;
  for (auto _ : state) {
    vramplan::ParamCounts counts = vramplan::count_parameters(model);
    benchmark::DoNotOptimize(counts);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_CountParameters, Llama_3_1_8B, "Llama-3.1-8B");
BENCHMARK_CAPTURE(BM_CountParameters, DeepSeekV3, "DeepSeek-V3");

}  // namespace

BENCHMARK_MAIN();
