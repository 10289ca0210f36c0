// The state of one vLLM or SGLang import, shared by the flag readers (serving_import.cc) and the
// engine's own conclusions (serving_engines.cc): defaults that depend on several flags, the
// engine version, and the contradictions the engine itself refuses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interop/import_builder.h"
#include "interop/serving/serving_args.h"
#include "interop/serving/serving_command.h"
#include "interop/serving/serving_log.h"
#include "vramplan/model/model.h"

namespace vramplan::interop {

// A value read from a flag, with the flag as written.
template <typename T>
struct Read {
  std::optional<T> value;
  std::string key;
  void set(T v, std::string k) {
    value = std::move(v);
    key = std::move(k);
  }
};

struct ServingState {
  ServingEngine engine = ServingEngine::kVllm;
  std::string engine_key;             // "vllm serve", "python3 -m sglang.launch_server"
  std::string model;                  // the model setting made ("" when none)
  std::optional<ModelConfig> preset;  // the model, when it is a preset
  Read<int64_t> tp, pp, dp, ep, context, batched_tokens, max_seqs;
  Read<double> utilization, mem_fraction;
  Read<bool> expert_parallel, chunked_prefill, dp_attention, ep_moe;
  EngineLog log;
  VllmGeneration generation = VllmGeneration::kUnknown;
  std::string generation_key, generation_value;
  Read<std::string> kv_connector;  // --kv-transfer-config's LMCache connector, when given
  std::string kv_offloading_key;   // --kv-offloading-size, when given
};

// vLLM's conclusions: the engine version and its defaults, expert parallelism over tp·dp, the
// fraction's default, and what vLLM refuses (serving_engines.cc).
std::optional<Error> finish_vllm(const ServingCommand& cmd, ServingState& st, ImportBuilder& out);

// SGLang's: data-parallel attention, the older --enable-ep-moe, a missing fraction.
std::optional<Error> finish_sglang(ServingState& st, ImportBuilder& out);

}  // namespace vramplan::interop
