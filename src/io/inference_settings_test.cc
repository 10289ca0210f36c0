#include "vramplan/io/inference_settings.h"

#include <gtest/gtest.h>

#include "vramplan/serving/inference.h"

namespace vramplan {
namespace {

using nlohmann::json;

Result<ResolvedInference> resolve(json settings) { return resolve_inference(settings, nullptr); }

ResolvedInference ok(json settings) {
  Result<ResolvedInference> r = resolve(std::move(settings));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r.value() : ResolvedInference{};
}

TEST(InferenceIo, FormatsComeFromConfigJson) {
  const ResolvedInference r = ok({{"model", "gpt-oss-20b"}});
  EXPECT_EQ(r.quantization, "mxfp4");
  EXPECT_EQ(r.scenario.weights[ModuleClass::kExperts].format, WeightFormat::kMxfp4);
  EXPECT_EQ(r.scenario.weights[ModuleClass::kAttention].format, WeightFormat::kBf16);
  EXPECT_EQ(r.scenario.kv_dtype, KvDtype::kBf16);
}

TEST(InferenceIo, WeightDtypeOverridesTheConfig) {
  // A float dtype serves every weight in it; a quantised one applies to the linear layers only.
  ResolvedInference r = ok({{"model", "gpt-oss-20b"}, {"weight_dtype", "bf16"}});
  EXPECT_FALSE(r.scenario.weights.quantized());
  r = ok({{"model", "Llama-3.1-8B"}, {"weight_dtype", "int4"}, {"quant_group_size", "64"}});
  EXPECT_EQ(r.scenario.weights[ModuleClass::kMlp].format, WeightFormat::kInt4);
  EXPECT_EQ(r.scenario.weights[ModuleClass::kMlp].group_size, 64);
  EXPECT_EQ(r.scenario.weights[ModuleClass::kEmbedding].format, WeightFormat::kBf16);
  r = ok({{"model", "Llama-3.1-8B"}, {"weight_dtype", "fp8"}, {"lm_head_dtype", "fp8-channel"}});
  EXPECT_EQ(r.scenario.weights[ModuleClass::kLmHead].format, WeightFormat::kFp8Channel);
  r = ok({{"model", "Llama-3.1-8B"}, {"weight_dtype", "fp16"}});
  EXPECT_EQ(r.scenario.weights.base, DType::kFp16);
  EXPECT_EQ(r.scenario.kv_dtype, KvDtype::kFp16);  // auto follows the weights
}

TEST(InferenceIo, EngineDefaultsFollowTheGpu) {
  // vLLM's arg_utils: >= 70 GiB and not an A100 → 8192 batched tokens, 1024 sequences.
  ResolvedInference r = ok({{"model", "Llama-3.1-8B"}});
  EXPECT_EQ(r.scenario.max_num_batched_tokens, 8192);
  EXPECT_EQ(r.scenario.max_num_seqs, 1024);
  r = ok({{"model", "Llama-3.1-8B"}, {"gpu", "a100-80gb"}});
  EXPECT_EQ(r.scenario.max_num_batched_tokens, 2048);
  EXPECT_EQ(r.scenario.max_num_seqs, 256);
  r = ok({{"model", "Llama-3.1-8B"}, {"gpu", "l4-24gb"}, {"max_num_seqs", 64}});
  EXPECT_EQ(r.scenario.max_num_seqs, 64);
}

TEST(InferenceIo, MemFractionStaticMeansSglang) {
  ResolvedInference r = ok({{"model", "Llama-3.1-8B"}, {"mem_fraction_static", "0.85"}});
  EXPECT_EQ(r.scenario.engine, ServingEngine::kSglang);
  EXPECT_EQ(r.scenario.block_size, 1);
  EXPECT_DOUBLE_EQ(*r.scenario.mem_fraction_static, 0.85);
}

TEST(InferenceIo, ModelOverridesAreSharedWithTraining) {
  const ResolvedInference r = ok({{"model", "Llama-3.1-8B"}, {"num_layers", 16}});
  EXPECT_EQ(r.scenario.model.num_layers, 16);
  EXPECT_FALSE(r.warnings.empty());  // "num_layers set to 16 (the model says 32)"
}

TEST(InferenceIo, BadInputNamesKeyValueAndAccepted) {
  auto error = [](json settings) {
    Result<ResolvedInference> r = resolve(std::move(settings));
    EXPECT_FALSE(r.ok());
    return r.ok() ? Error{} : r.error();
  };
  Error e = error({{"model", "Llama-3.1-8B"}, {"kv_dtype", "int3"}});
  EXPECT_EQ(e.field, "kv_dtype");
  EXPECT_EQ(e.value, "int3");
  EXPECT_NE(e.accepted.find("fp8"), std::string::npos);
  e = error({{"model", "Llama-3.1-8B"}, {"weight_dtype", "q4_k"}});
  EXPECT_EQ(e.field, "weight_dtype");
  EXPECT_NE(e.accepted.find("nvfp4"), std::string::npos);
  e = error({{"model", "Llama-3.1-8B"}, {"seq_len", 4096}});
  EXPECT_EQ(e.field, "seq_len");  // a training key
  e = error({{"model", "Llama-3.1-8B"}, {"engine", "tgi"}});
  EXPECT_EQ(e.accepted, "vllm, sglang");
  e = error({{"model", "Llama-3.1-8B"}, {"gpu", "h300"}});
  EXPECT_EQ(e.field, "gpu");
  e = error({{"model", "Llama-3.1-8B"}, {"context", "0"}});
  EXPECT_EQ(e.field, "context");
  e = error({{"model", "Llama-3.1-8B"}, {"gpu_memory_utilization", "lots"}});
  EXPECT_EQ(e.field, "gpu_memory_utilization");
}

TEST(InferenceIo, OptionTableHasTheIssuesFlags) {
  std::vector<std::string> keys;
  for (const OptionSpec& o : inference_options()) keys.push_back(o.key);
  for (const char* key : {"model", "tp", "pp", "ep", "gpu", "context", "batch", "weight_dtype",
                          "kv_dtype", "gpu_memory_utilization", "mem_fraction_static"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
}

}  // namespace
}  // namespace vramplan
