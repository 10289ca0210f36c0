// Where the time of one API request goes, without sockets: POST /api/estimate end to end through
// handle_request(), and its parts (settings -> estimate with formulas and fit, the JSON tree,
// dumping it); and a 1,000-point sweep. bench/load_test.sh measures the same over HTTP.
//
//   build/api_bench [--benchmark_filter=Estimate]
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <string>

#include "server/api.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/report/settings_report.h"

namespace {

using nlohmann::json;
using vramplan::server::Request;

const json kLlama = {{"model", "Llama-3.1-8B"}, {"gpu", "h100-80gb"}, {"gpus", 8},
                     {"seq_len", 8192},         {"global_batch", 64}, {"fsdp", "full_shard"},
                     {"recompute", "selective"}};
const json kDeepSeek = {{"model", "DeepSeek-V3"},
                        {"gpus", 1024},
                        {"tp", 2},
                        {"pp", 16},
                        {"ep", 64},
                        {"global_batch", 2048},
                        {"first_stage_layers", 4},
                        {"last_stage_layers", 1}};

Request post(const std::string& path, const json& body) {
  Request request;
  request.method = "POST";
  request.path = path;
  request.body = body.dump();
  return request;
}

void BM_PostEstimate(benchmark::State& state, const json& settings) {
  const Request request = post("/api/estimate", settings);
  for (auto _ : state) {
    vramplan::server::Response response = vramplan::server::handle_request(request);
    if (response.status != 200) {
      state.SkipWithError(response.body.c_str());
      break;
    }
    benchmark::DoNotOptimize(response);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_PostEstimate, Llama_3_1_8B, kLlama);
BENCHMARK_CAPTURE(BM_PostEstimate, DeepSeekV3_1024, kDeepSeek);

// The parts of one request, Llama-3.1-8B.
void BM_EstimateSettings(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::estimate_settings(kLlama, nullptr));
}
BENCHMARK(BM_EstimateSettings);

void BM_EstimateToJson(benchmark::State& state) {
  const auto result = vramplan::estimate_settings(kLlama, nullptr);
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::settings_estimate_to_json(*result));
}
BENCHMARK(BM_EstimateToJson);

void BM_DumpJson(benchmark::State& state) {
  const json tree =
      vramplan::settings_estimate_to_json(*vramplan::estimate_settings(kLlama, nullptr));
  for (auto _ : state) benchmark::DoNotOptimize(tree.dump());
}
BENCHMARK(BM_DumpJson);

void BM_Sweep1000(benchmark::State& state) {
  const Request request = post(
      "/api/sweep",
      {{"scenario", kLlama}, {"vary", "seq_len"}, {"from", 128}, {"to", 128000}, {"step", 128}});
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::server::handle_request(request));
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Sweep1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
