#include "interop/serving/serving_emit.h"

#include <gtest/gtest.h>

#include "vramplan/interop/emit.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/io/inference_settings.h"

namespace vramplan {
namespace {

using nlohmann::json;

const FileReader kNoFiles;

struct Figures {
  int64_t kv_tokens = -1, sequences = -1, device = 0, allocated = 0;
  bool operator==(const Figures&) const = default;
};

Figures figures_of(const SettingsInference& r) {
  Figures f;
  if (r.estimate.capacity) {
    f.kv_tokens = r.estimate.capacity->max_kv_tokens;
    f.sequences = r.estimate.capacity->max_sequences;
  }
  f.device = r.estimate.device_bytes;
  f.allocated = r.estimate.allocated_bytes;
  return f;
}

// round_trip_infer: `infer SETTINGS`, then `infer --from (infer SETTINGS --emit FORMAT)`; the KV
// capacity (tokens, sequences) and the peak must be the same, and the import clean.
void round_trip_infer(const json& settings, const std::string& format) {
  SCOPED_TRACE(format + " " + settings.dump());
  Result<SettingsInference> direct = infer_settings(settings, kNoFiles);
  ASSERT_TRUE(direct.ok()) << direct.error().message();
  Result<std::string> command = emit_serving(direct->resolved.scenario, settings, format);
  ASSERT_TRUE(command.ok()) << command.error().message();
  Result<SettingsInference> back = infer_settings({{"from", *command}}, kNoFiles);
  ASSERT_TRUE(back.ok()) << back.error().message() << "\n" << *command;
  EXPECT_EQ(back->resolved.imported->format, format);
  EXPECT_TRUE(back->resolved.imported->warnings.empty())
      << back->resolved.imported->warnings.front() << "\n"
      << *command;
  Figures expected = figures_of(*direct);
  if (!direct->estimate.capacity) {  // read back at vLLM's default fraction: the same peak
    ASSERT_TRUE(back->estimate.capacity);
    expected.kv_tokens = back->estimate.capacity->max_kv_tokens;
    expected.sequences = back->estimate.capacity->max_sequences;
  }
  EXPECT_EQ(expected, figures_of(*back)) << *command;
}

TEST(ServingEmit, VllmRoundTrips) {
  round_trip_infer({{"model", "Llama-3.1-8B"}, {"gpu_memory_utilization", 0.9}}, "vllm");
  round_trip_infer({{"model", "Llama-3.1-70B"},
                    {"tp", 4},
                    {"context", 32768},
                    {"kv_dtype", "fp8"},
                    {"weight_dtype", "fp8"},
                    {"gpu_memory_utilization", 0.92}},
                   "vllm");
  round_trip_infer({{"model", "Qwen3-30B-A3B"},
                    {"tp", 2},
                    {"dp", 2},
                    {"ep", 4},
                    {"gpu", "h200-141gb"},
                    {"batch", 8},
                    {"gpu_memory_utilization", 0.85},
                    {"max_num_seqs", 256},
                    {"max_num_batched_tokens", 4096}},
                   "vllm");
  round_trip_infer({{"model", "gpt-oss-120b"},
                    {"tp", 2},
                    {"cuda_graphs", false},
                    {"block_size", 32},
                    {"gpu_memory_gib", 79.18},
                    {"gpu_memory_utilization", 0.9}},
                   "vllm");
  round_trip_infer({{"model", "Qwen3-8B"},
                    {"pp", 2},
                    {"dtype", "fp16"},
                    {"cuda_graph_in_budget", true},
                    {"non_torch_gib", 0.2},
                    {"gpu_memory_utilization", 0.8}},
                   "vllm");
  round_trip_infer({{"model", "DeepSeek-V2-Lite"}, {"quantization", "fp8"}},
                   "vllm");  // no fraction
}

TEST(ServingEmit, SglangRoundTrips) {
  round_trip_infer({{"model", "Qwen3-8B"}, {"tp", 2}, {"mem_fraction_static", 0.85}}, "sglang");
  round_trip_infer({{"model", "Qwen3-235B-A22B"},
                    {"tp", 8},
                    {"ep", 8},
                    {"context", 40960},
                    {"kv_dtype", "fp8"},
                    {"weight_dtype", "fp8"},
                    {"mem_fraction_static", 0.9},
                    {"cuda_graphs", false}},
                   "sglang");
  round_trip_infer({{"model", "Llama-3.1-8B"},
                    {"engine", "sglang"},
                    {"dp", 2},
                    {"block_size", 16},
                    {"gpu", "a100-80gb"},
                    {"mem_fraction_static", 0.88}},
                   "sglang");
}

TEST(ServingEmit, StdoutHoldsTheCommandInTheEnginesOwnWords) {
  Result<SettingsInference> r = infer_settings(
      {{"model", "Qwen3-30B-A3B"}, {"tp", 2}, {"ep", 2}, {"gpu_memory_utilization", 0.9}},
      kNoFiles);
  ASSERT_TRUE(r.ok());
  const std::string vllm =
      *emit_serving(r->resolved.scenario, {{"model", "Qwen3-30B-A3B"}}, "vllm");
  EXPECT_NE(vllm.find("vllm serve Qwen/Qwen3-30B-A3B"), std::string::npos);  // the Hub id
  EXPECT_NE(vllm.find("--enable-expert-parallel"), std::string::npos);
  EXPECT_NE(vllm.find("--gpu-memory-utilization 0.9"), std::string::npos);
}

Error emit_error(const json& settings, const std::string& format) {
  Result<SettingsInference> r = infer_settings(settings, kNoFiles);
  EXPECT_TRUE(r.ok()) << r.error().message();
  if (!r.ok()) return {};
  Result<std::string> command = emit_serving(r->resolved.scenario, settings, format);
  EXPECT_FALSE(command.ok());
  return command.ok() ? Error{} : command.error();
}

TEST(ServingEmit, WhatTheEngineCannotExpressIsAnErrorNamingEmit) {
  // vLLM splits experts over tp·dp or tp; SGLang over tp.
  Error e = emit_error({{"model", "Qwen3-30B-A3B"}, {"tp", 4}, {"ep", 2}}, "vllm");
  EXPECT_EQ(e.field, "emit");
  EXPECT_NE(e.reason.find("tp·dp"), std::string::npos);
  EXPECT_EQ(
      emit_error({{"model", "Qwen3-30B-A3B"}, {"tp", 4}, {"ep", 2}, {"engine", "sglang"}}, "sglang")
          .field,
      "emit");
  // The other engine's conventions, a reshaped or per-module model, formats no engine loads.
  EXPECT_EQ(emit_error({{"model", "Qwen3-8B"}, {"mem_fraction_static", 0.9}}, "vllm").field,
            "emit");
  EXPECT_EQ(emit_error({{"model", "Qwen3-8B"}, {"num_layers", 8}}, "vllm").field, "emit");
  EXPECT_EQ(emit_error({{"model", "Qwen3-8B"}, {"attention_dtype", "int4"}}, "vllm").field, "emit");
  EXPECT_EQ(emit_error({{"model", "Qwen3-8B"}, {"weight_dtype", "nf4"}}, "vllm").field, "emit");
  EXPECT_EQ(emit_error({{"model", "Qwen3-8B"}, {"kv_dtype", "int8"}}, "vllm").field, "emit");
  EXPECT_EQ(
      emit_error({{"model", "Qwen3-8B"}, {"kv_dtype", "fp16"}, {"engine", "sglang"}}, "sglang")
          .field,
      "emit");
  EXPECT_EQ(emit_error({{"hidden_size", 1024},
                        {"num_layers", 4},
                        {"num_heads", 8},
                        {"ffn_size", 4096},
                        {"vocab_size", 32000},
                        {"context", 2048}},
                       "vllm")
                .field,
            "emit");
  // A serving format for training, a training format for serving.
  Result<SettingsInference> r = infer_settings({{"model", "Qwen3-8B"}}, kNoFiles);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(emit_serving(r->resolved.scenario, {}, "megatron").error().field, "emit");
}

}  // namespace
}  // namespace vramplan
