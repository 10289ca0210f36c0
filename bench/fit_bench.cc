// Speed of the "what fits" questions (docs/fit.md): each question for Llama-3.1-8B on 8 H100s
// (dp 8, ZeRO-3, full recomputation, seq 8192) and Llama-3.1-70B on 64 H100s (tp 8, sp, pp 2, dp 4,
// distributed optimizer, seq 8192), and the smallest GPU count for each at seq 32768. Counters:
//   estimates   estimates computed by one answer (GPU count: planner searches)
//   layouts     GPU count: layouts the planner decided over every count tried
//   value       the answer
//
//   build/fit_bench [--benchmark_filter=70B]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "vramplan/io/fit_settings.h"
#include "vramplan/io/scenario_io.h"

namespace {

using nlohmann::json;

const vramplan::FileReader kNoFiles;

json llama8b(const char* question) {
  json s = {{"model", "Llama-3.1-8B"}, {"gpu", "h100-80gb"}, {"question", question}};
  if (std::string(question) == "gpus") {
    s.update({{"seq_len", 32768}, {"global_batch", 256}});
    return s;
  }
  s.update({{"dp", 8}, {"zero", 3}, {"recompute", "full"}});
  if (std::string(question) != "seq_len") s["seq_len"] = 8192;
  return s;
}

json llama70b(const char* question) {
  json s = {{"model", "Llama-3.1-70B"}, {"gpu", "h100-80gb"}, {"question", question}};
  if (std::string(question) == "gpus") {
    s.update({{"seq_len", 32768}, {"global_batch", 512}});
    return s;
  }
  s.update({{"tp", 8},
            {"sequence_parallel", true},
            {"pp", 2},
            {"dp", 4},
            {"distributed_optimizer", true},
            {"recompute", "selective"}});
  if (std::string(question) != "seq_len") s["seq_len"] = 8192;
  return s;
}

void run(benchmark::State& state, const json& settings) {
  vramplan::Result<vramplan::FitRequest> request =
      vramplan::fit_request_from_settings(settings, kNoFiles);
  if (!request) {
    std::cerr << "fit_bench: " << request.error().message() << "\n";
    std::exit(1);
  }
  vramplan::FitAnswer last;
  for (auto _ : state) {
    vramplan::Result<vramplan::FitAnswer> a = vramplan::fit(*request);
    if (!a) {
      std::cerr << "fit_bench: " << a.error().message() << "\n";
      std::exit(1);
    }
    last = std::move(a).value();
    benchmark::DoNotOptimize(last.value);
  }
  state.counters["estimates"] = static_cast<double>(last.evaluated);
  state.counters["layouts"] = static_cast<double>(last.layouts);
  state.counters["value"] = static_cast<double>(last.value);
}

#define FIT_BENCH(name, settings)                              \
  void name(benchmark::State& state) { run(state, settings); } \
  BENCHMARK(name)->UseRealTime()->Unit(benchmark::kMillisecond)

FIT_BENCH(BM_MicroBatch_8B, llama8b("micro_batch"));
FIT_BENCH(BM_SeqLen_8B, llama8b("seq_len"));
FIT_BENCH(BM_GlobalBatch_8B, llama8b("global_batch"));
FIT_BENCH(BM_Gpus_8B, llama8b("gpus"));
FIT_BENCH(BM_MicroBatch_70B, llama70b("micro_batch"));
FIT_BENCH(BM_SeqLen_70B, llama70b("seq_len"));
FIT_BENCH(BM_GlobalBatch_70B, llama70b("global_batch"));
FIT_BENCH(BM_Gpus_70B, llama70b("gpus"));

}  // namespace

BENCHMARK_MAIN();
