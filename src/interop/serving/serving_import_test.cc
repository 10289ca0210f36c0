#include "interop/serving/serving_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "vramplan/interop/import.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/io/inference_settings.h"

namespace vramplan {
namespace {

using nlohmann::json;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(VRAMPLAN_SOURCE_DIR) + "/tests/fixtures/imports/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const FileReader kNoFiles;

bool ignored_as(const Imported& i, const std::string& key, const std::string& reason) {
  return std::any_of(i.ignored.begin(), i.ignored.end(), [&](const IgnoredKey& k) {
    return k.key == key && k.reason.find(reason) != std::string::npos;
  });
}

bool understood_as(const Imported& i, const std::string& key, const std::string& setting) {
  return std::any_of(i.understood.begin(), i.understood.end(), [&](const UnderstoodKey& k) {
    return k.key == key && k.setting.find(setting) != std::string::npos;
  });
}

bool warned(const Imported& i, const std::string& text) {
  return std::any_of(i.warnings.begin(), i.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

Imported import_ok(const std::string& text) {
  Result<Imported> imported = import_config(text);
  EXPECT_TRUE(imported.ok()) << imported.error().message();
  return imported.ok() ? std::move(imported).value() : Imported{};
}

Error import_error(const std::string& text) {
  Result<SettingsInference> r = infer_settings({{"from", text}}, kNoFiles);
  EXPECT_FALSE(r.ok());
  return r.ok() ? Error{} : r.error();
}

TEST(VllmImport, ReadsARecipeScriptWithItsVariablesAndExpertParallelism) {
  const Imported i = import_ok(fixture("vllm/qwen3_235b_ep.sh"));
  const json& s = i.settings;
  EXPECT_EQ(i.format, "vllm");
  EXPECT_EQ(s["engine"], "vllm");
  EXPECT_EQ(s["model"], "Qwen/Qwen3-235B-A22B");  // $MODEL expanded
  EXPECT_EQ(s["tp"], 8);
  EXPECT_EQ(s["ep"], 8);  // --enable-expert-parallel: tp·dp
  EXPECT_EQ(s["context"], 32768);
  EXPECT_EQ(s["gpu_memory_utilization"], 0.9);
  EXPECT_EQ(s["max_num_seqs"], 512);
  EXPECT_EQ(s["max_num_batched_tokens"], 8192);
  EXPECT_TRUE(understood_as(i, "VLLM_USE_V1", "vLLM V1"));
  EXPECT_TRUE(ignored_as(i, "--enable-prefix-caching", "no effect on memory"));
  EXPECT_TRUE(ignored_as(i, "--served-model-name", "no effect on memory"));
  EXPECT_TRUE(i.warnings.empty());
}

TEST(VllmImport, ReadsTheOlderApiServerWithDtypeEagerAndFp8Cache) {
  const Imported i = import_ok(fixture("vllm/llama_api_server.sh"));
  const json& s = i.settings;
  EXPECT_EQ(s["model"], "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(s["dtype"], "fp16");
  EXPECT_EQ(s["context"], 8192);  // --max_model_len, underscores as vLLM accepts them
  EXPECT_EQ(s["cuda_graphs"], false);
  EXPECT_EQ(s["kv_dtype"], "fp8");
  EXPECT_EQ(s["block_size"], 32);
  EXPECT_EQ(s["gpu_memory_utilization"], 0.9);  // vLLM's default, said so
  EXPECT_TRUE(understood_as(i, "--gpu-memory-utilization", "vLLM's default"));
  EXPECT_EQ(s["swap_space_gib"], 16);  // host memory (docs/offload.md)
  EXPECT_TRUE(understood_as(i, "--swap-space", "swap_space_gib"));
}

TEST(VllmImport, ReadsDockerRunAndTheCompilationConfig) {
  const Imported i = import_ok(fixture("vllm/docker_gpt_oss.sh"));
  const json& s = i.settings;
  EXPECT_EQ(s["model"], "openai/gpt-oss-120b");  // positional, after the image
  EXPECT_EQ(s["tp"], 2);
  EXPECT_EQ(s["cuda_graph_in_budget"], true);  // -e VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1
  EXPECT_EQ(s["cuda_graphs"], true);
  EXPECT_TRUE(ignored_as(i, "HUGGING_FACE_HUB_TOKEN", "no effect on memory"));
  EXPECT_TRUE(ignored_as(i, "--compilation-config.cudagraph_capture_sizes", "not modelled"));
}

TEST(VllmImport, APastedV0SessionAppliesV0sDefaultsAndSaysSo) {
  const Imported i = import_ok(fixture("vllm/v0_session.txt"));
  const json& s = i.settings;
  EXPECT_EQ(s["gpu_memory_gib"], 79.22);  // the GPU total the engine saw
  EXPECT_EQ(s["gpu_memory_utilization"], 0.9);
  EXPECT_EQ(s["max_num_seqs"], 256);             // V0's default
  EXPECT_EQ(s["max_num_batched_tokens"], 8192);  // max(max_model_len, 2048) without chunking
  EXPECT_TRUE(understood_as(i, "log: Memory profiling results:", "vLLM V0"));
  EXPECT_TRUE(understood_as(i, "log: vLLM API server version 0.6.5", "vLLM 0.6.5"));
  EXPECT_TRUE(warned(i, "V0"));
  EXPECT_TRUE(ignored_as(i, "log", "measured figures never are"));
  // Without the log the same command takes V1's defaults.
  const Imported v1 = import_ok("vllm serve meta-llama/Llama-3.1-8B --max-model-len 8192\n");
  EXPECT_FALSE(v1.settings.contains("max_num_seqs"));
}

TEST(VllmImport, DataParallelExpertsOverEveryGpu) {
  const Imported i = import_ok(fixture("vllm/deepseek_v3_dp.sh"));
  EXPECT_EQ(i.settings["dp"], 8);
  EXPECT_EQ(i.settings["ep"], 8);
  // On a dense preset the flag does nothing.
  const Imported dense = import_ok("vllm serve Qwen/Qwen3-8B -tp 2 --enable-expert-parallel\n");
  EXPECT_FALSE(dense.settings.contains("ep"));
  EXPECT_TRUE(ignored_as(dense, "--enable-expert-parallel", "has no experts"));
}

TEST(VllmImport, ChunkedPrefillOffStepsTheWholeContext) {
  const Imported i =
      import_ok("vllm serve Qwen/Qwen3-8B --max-model-len 16k --no-enable-chunked-prefill\n");
  EXPECT_EQ(i.settings["max_num_batched_tokens"], 16000);
  const Imported unknown = import_ok("vllm serve org/unknown --enable-chunked-prefill False\n");
  EXPECT_TRUE(warned(unknown, "give --max-num-batched-tokens"));
}

TEST(VllmImport, EveryFlagIsListedAndUnknownOnesWarn) {
  const Imported i = import_ok(
      "vllm serve Qwen/Qwen3-8B --cpu-offload-gb 0 --speculative-config '{\"method\": \"ngram\"}' "
      "--api-key sk-123 --mystery 3 -tp 2 -tp 4\n");
  EXPECT_EQ(i.settings["tp"], 4);  // the parser keeps the last
  EXPECT_TRUE(ignored_as(i, "-tp", "given again later"));
  EXPECT_TRUE(ignored_as(i, "--cpu-offload-gb", "nothing offloaded"));
  EXPECT_TRUE(ignored_as(i, "--speculative-config", "draft model"));
  EXPECT_TRUE(ignored_as(i, "--mystery", "not a vLLM argument vramplan knows"));
  EXPECT_TRUE(warned(i, "--mystery"));
  const auto key = std::find_if(i.ignored.begin(), i.ignored.end(),
                                [](const IgnoredKey& k) { return k.key == "--api-key"; });
  ASSERT_NE(key, i.ignored.end());
  EXPECT_EQ(key->value, "(not shown)");
  const Imported sglang = import_ok(
      "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --max-prefill-tokens 8192 "
      "--tokenizer-path t\n");
  EXPECT_TRUE(std::any_of(sglang.ignored.begin(), sglang.ignored.end(), [](const IgnoredKey& k) {
    return k.key == "--max-prefill-tokens" && k.value == "8192";
  }));
}

TEST(SglangImport, ReadsItsMemoryAndSchedulingFlags) {
  const Imported i = import_ok(fixture("sglang/qwen3_moe.sh"));
  const json& s = i.settings;
  EXPECT_EQ(i.format, "sglang");
  EXPECT_EQ(s["engine"], "sglang");
  EXPECT_EQ(s["tp"], 2);
  EXPECT_EQ(s["ep"], 2);
  EXPECT_EQ(s["mem_fraction_static"], 0.85);
  EXPECT_EQ(s["context"], 32768);
  EXPECT_EQ(s["max_num_batched_tokens"], 4096);  // --chunked-prefill-size
  EXPECT_EQ(s["max_num_seqs"], 128);             // --max-running-requests
  EXPECT_EQ(s["kv_dtype"], "fp8");
  EXPECT_TRUE(ignored_as(i, "--cuda-graph-max-bs", "not modelled"));
}

TEST(SglangImport, DocsCommandsAndDockerRead) {
  const Imported ds = import_ok(fixture("sglang/deepseek_v3.sh"));
  EXPECT_EQ(ds.settings["model"], "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(ds.settings["tp"], 8);  // --tp, argparse's abbreviation of --tp-size
  EXPECT_TRUE(warned(ds, "--mem-fraction-static"));
  const Imported docker = import_ok(fixture("sglang/docker_llama.sh"));
  EXPECT_EQ(docker.settings["mem_fraction_static"], 0.8);
  EXPECT_TRUE(ignored_as(docker, "HF_TOKEN", "no effect on memory"));
}

TEST(SglangImport, DataParallelAttentionIsNotModelledAndSaysSo) {
  const Imported i = import_ok(
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 "
      "--enable-dp-attention --mem-fraction-static 0.8 --chunked-prefill-size -1\n");
  EXPECT_FALSE(i.settings.contains("dp"));  // replicas inside the tp GPUs, not more GPUs
  EXPECT_TRUE(ignored_as(i, "--enable-dp-attention", "not modelled"));
  EXPECT_TRUE(ignored_as(i, "--chunked-prefill-size", "not modelled"));
}

TEST(ServingImport, DetectionStealsNoOtherFormat) {
  EXPECT_STREQ(detect_import_format(fixture("megatron/llama3_8b_pretrain.sh"))->name, "megatron");
  EXPECT_STREQ(detect_import_format(fixture("vllm/qwen3_235b_ep.sh"))->name, "vllm");
  EXPECT_STREQ(detect_import_format(fixture("sglang/qwen3_moe.sh"))->name, "sglang");
  EXPECT_EQ(detect_import_format("echo vllm serve is great\n"), nullptr);
}

TEST(ServingImport, ErrorsNameTheFlagAsWritten) {
  EXPECT_EQ(import_error("vllm serve Qwen/Qwen3-8B -tp two\n").field, "-tp");
  EXPECT_EQ(import_error("vllm serve Qwen/Qwen3-8B -tp 3\n").field, "-tp");  // 32 heads
  EXPECT_EQ(import_error("vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 1.5\n").field,
            "--gpu-memory-utilization");
  EXPECT_EQ(import_error("vllm serve Qwen/Qwen3-8B --kv-cache-dtype nvfp4\n").field,
            "--kv-cache-dtype");
  EXPECT_EQ(import_error("vllm serve Qwen/Qwen3-8B --quantization awq\n").field, "--quantization");
  EXPECT_EQ(import_error("vllm serve Qwen/Qwen3-8B --model Qwen/Qwen3-4B\n").field, "--model");
  EXPECT_EQ(import_error("vllm serve Qwen/Qwen3-8B --max-num-seqs 512 --max-num-batched-tokens "
                         "256\n")
                .field,
            "--max-num-batched-tokens");
  EXPECT_EQ(import_error("vllm serve Qwen/Qwen3-8B --no-enable-chunked-prefill --max-model-len "
                         "8192 --max-num-batched-tokens 4096\n")
                .field,
            "--max-num-batched-tokens");
  EXPECT_EQ(import_error("vllm serve --tensor-parallel-size 2\n").field, "vllm serve");
  EXPECT_EQ(import_error("python -m sglang.launch_server --tp 2\n").field,
            "python -m sglang.launch_server");
  EXPECT_EQ(import_error("python -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                         "--mem-fraction-static lots\n")
                .field,
            "--mem-fraction-static");
  EXPECT_EQ(import_error("$ vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.8\n"
                         "INFO 12-13 19:54:18 worker.py:243] gpu_memory_utilization 0.90\n")
                .field,
            "log: gpu_memory_utilization 0.90");
  // A training config for infer.
  EXPECT_EQ(import_error(fixture("megatron/llama3_8b_pretrain.sh")).field, "from");
}

TEST(ServingImport, TheEstimateOfTheCommandIsTheEstimateOfItsSettings) {
  // Reading the command changes nothing but the settings: the same estimate as the flags.
  Result<SettingsInference> from =
      infer_settings({{"from", fixture("sglang/qwen3_moe.sh")}}, kNoFiles);
  ASSERT_TRUE(from.ok()) << from.error().message();
  json same = from->resolved.imported->settings;
  Result<SettingsInference> direct = infer_settings(same, kNoFiles);
  ASSERT_TRUE(direct.ok()) << direct.error().message();
  EXPECT_EQ(from->estimate.device_bytes, direct->estimate.device_bytes);
  ASSERT_TRUE(from->estimate.capacity && direct->estimate.capacity);
  EXPECT_EQ(from->estimate.capacity->max_kv_tokens, direct->estimate.capacity->max_kv_tokens);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

// The engines' offload flags become the serving offload settings (docs/offload.md, "Serving").
TEST(ServingImportOffload, VllmWeightsSwapAndKvOffload) {
  const Imported i = import_ok(
      "vllm serve Qwen/Qwen3-8B --cpu-offload-gb 4 --swap-space 8 --kv-offloading-size 32 "
      "--kv-offloading-backend lmcache\n");
  EXPECT_EQ(i.settings["cpu_offload_gib"], 4);
  EXPECT_EQ(i.settings["swap_space_gib"], 8);
  EXPECT_EQ(i.settings["kv_offload_gib"], 32);
  EXPECT_TRUE(understood_as(i, "--kv-offloading-backend", "pinned host memory"));
  const Result<Imported> bad =
      import_config("vllm serve Qwen/Qwen3-8B --kv-offloading-backend disk\n", "vllm");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().field, "--kv-offloading-backend");
}

TEST(ServingImportOffload, SglangHierarchicalCacheNeedsItsSwitch) {
  const Imported on = import_ok(
      "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --mem-fraction-static 0.85 "
      "--enable-hierarchical-cache --hicache-ratio 3 --hicache-size 0 --cpu-offload-gb 2\n");
  EXPECT_EQ(on.settings["enable_hierarchical_cache"], true);
  EXPECT_EQ(on.settings["hicache_ratio"], 3);
  EXPECT_FALSE(on.settings.contains("hicache_size_gb"));  // 0: the ratio
  EXPECT_TRUE(understood_as(on, "--hicache-size", "--hicache-ratio"));
  EXPECT_EQ(on.settings["cpu_offload_gib"], 2);
  // Without the switch SGLang never reads the ratio: listed, not set.
  const Imported off =
      import_ok("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --hicache-ratio 3\n");
  EXPECT_FALSE(off.settings.contains("hicache_ratio"));
  EXPECT_TRUE(ignored_as(off, "--hicache-ratio", "without --enable-hierarchical-cache"));
}

TEST(ServingImportOffload, TheEstimateCarriesTheHostRows) {
  const Result<SettingsInference> r = infer_settings(
      {{"from",
        "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.9 --kv-offloading-size 16 "
        "--kv-offloading-backend native"}},
      kNoFiles);
  ASSERT_TRUE(r) << r.error().reason;
  EXPECT_EQ(r->estimate.host_bytes, int64_t{16} << 30);
  const Result<SettingsInference> negative =
      infer_settings({{"from", "vllm serve Qwen/Qwen3-8B --cpu-offload-gb -2"}}, kNoFiles);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().field, "--cpu-offload-gb");
}

}  // namespace
}  // namespace vramplan
