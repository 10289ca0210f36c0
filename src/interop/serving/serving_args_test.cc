#include "interop/serving/serving_args.h"

#include <gtest/gtest.h>

#include "interop/serving/engine_flags.h"
#include "interop/serving/serving_command.h"
#include "interop/serving/serving_log.h"
#include "interop/serving/serving_values.h"

namespace vramplan::interop {
namespace {

using Words = std::vector<std::string>;

SplitArgs split(const Words& words) {
  Result<SplitArgs> s = split_serving_args(words, vllm_flags());
  EXPECT_TRUE(s.ok()) << s.error().message();
  return s.ok() ? std::move(s).value() : SplitArgs{};
}

TEST(ServingArgs, ReadsEveryFormArgparseAccepts) {
  const SplitArgs s = split({"meta-llama/Llama-3.1-8B", "-tp", "2", "--max_model_len=32k",
                             "--enforce-eager", "--no-enable-prefix-caching", "--cuda-graph-sizes",
                             "1", "2", "4", "-O3", "--compilation-config.cudagraph_mode", "NONE",
                             "--enable-chunked-prefill", "False", "--host", "0.0.0.0"});
  ASSERT_EQ(s.positionals, Words{"meta-llama/Llama-3.1-8B"});
  ASSERT_EQ(s.args.size(), 9u);
  EXPECT_EQ(s.args[0].name, "--tensor-parallel-size");  // the alias's canonical name
  EXPECT_EQ(s.args[0].written, "-tp");
  EXPECT_EQ(s.args[0].value, "2");
  EXPECT_EQ(s.args[1].name, "--max-model-len");  // underscores as dashes
  EXPECT_EQ(s.args[1].written, "--max_model_len");
  EXPECT_EQ(s.args[1].value, "32k");
  EXPECT_EQ(s.args[2].value, "true");  // a switch
  EXPECT_EQ(s.args[3].name, "--enable-prefix-caching");
  EXPECT_EQ(s.args[3].value, "false");  // its --no- form
  EXPECT_EQ(s.args[4].value, "1 2 4");  // nargs='+'
  EXPECT_EQ(s.args[5].name, "--compilation-config");
  EXPECT_EQ(s.args[5].value, "3");  // -O3
  EXPECT_EQ(s.args[6].subkey, "cudagraph_mode");
  EXPECT_EQ(s.args[6].value, "NONE");
  EXPECT_EQ(s.args[7].value, "False");  // the older StoreBoolean takes a value
}

TEST(ServingArgs, NegativeNumbersAreValuesAndUnknownFlagsKeepTheirValue) {
  Result<SplitArgs> s =
      split_serving_args({"--chunked-prefill-size", "-1", "--new-flag", "x"}, sglang_flags());
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->args.size(), 2u);
  EXPECT_EQ(s->args[0].value, "-1");
  EXPECT_EQ(s->args[1].spec, nullptr);
  EXPECT_EQ(s->args[1].value, "x");
}

TEST(ServingArgs, AValueFlagAtTheEndIsAnErrorNamingIt) {
  Result<SplitArgs> s = split_serving_args({"--max-model-len"}, vllm_flags());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().field, "--max-model-len");
}

TEST(ServingValues, HumanReadableIntegersAsVllmParsesThem) {
  EXPECT_EQ(*human_readable_int("k", "32k"), 32000);
  EXPECT_EQ(*human_readable_int("k", "32K"), 32768);
  EXPECT_EQ(*human_readable_int("k", "25.6k"), 25600);
  EXPECT_EQ(*human_readable_int("k", "1M"), 1048576);
  EXPECT_EQ(*human_readable_int("k", "8192"), 8192);
  EXPECT_FALSE(human_readable_int("--max-model-len", "1.5K").ok());  // no decimals with binary
  const Result<int64_t> bad = human_readable_int("--max-model-len", "lots");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "--max-model-len");
}

TEST(ServingValues, DtypesAndKvDtypesInVramplansWords) {
  EXPECT_EQ(*model_dtype("--dtype", "half"), "fp16");
  EXPECT_EQ(*model_dtype("--dtype", "bfloat16"), "bf16");
  EXPECT_EQ(*model_dtype("--dtype", "float"), "fp32");
  EXPECT_FALSE(model_dtype("--dtype", "int8").ok());
  EXPECT_EQ(kv_cache_dtype(ServingEngine::kVllm, "k", "fp8_e5m2")->setting, "fp8");
  EXPECT_EQ(kv_cache_dtype(ServingEngine::kSglang, "k", "fp8_e4m3")->setting, "fp8");
  EXPECT_EQ(kv_cache_dtype(ServingEngine::kSglang, "k", "bf16")->setting, "bf16");
  EXPECT_FALSE(kv_cache_dtype(ServingEngine::kVllm, "k", "nvfp4").ok());
  EXPECT_FALSE(kv_cache_dtype(ServingEngine::kSglang, "k", "fp8").ok());  // SGLang spells it out
}

TEST(ServingCommand, FindsTheEngineInScriptsDockerAndPastedSessions) {
  const PastedText pasted = split_pasted(
      "$ CUDA_VISIBLE_DEVICES=0,1 vllm serve Qwen/Qwen3-8B -tp 2\n"
      "INFO 04-24 16:32:59 [loader.py:458] Loading weights took 2.95 seconds\n"
      "(VllmWorker rank=0 pid=12) INFO 04-24 16:33:13 [gpu_worker.py:1] Free memory\n");
  EXPECT_EQ(pasted.log.size(), 2u);
  std::optional<ServingCommand> cmd = find_serving_command(pasted.script);
  ASSERT_TRUE(cmd);
  EXPECT_EQ(cmd->program, "vllm serve");
  EXPECT_EQ(cmd->words, (Words{"Qwen/Qwen3-8B", "-tp", "2"}));
  EXPECT_EQ(cmd->environment.at("CUDA_VISIBLE_DEVICES"), "0,1");

  cmd = find_serving_command(
      "docker run --gpus all -e VLLM_USE_V1=0 -p 8000:8000 --ipc=host vllm/vllm-openai:v0.9.2 "
      "--model m\n");
  ASSERT_TRUE(cmd);
  EXPECT_EQ(cmd->program, "docker run vllm/vllm-openai:v0.9.2");
  EXPECT_EQ(cmd->environment.at("VLLM_USE_V1"), "0");

  cmd = find_serving_command(
      "docker run --gpus all lmsysorg/sglang:latest python3 -m "
      "sglang.launch_server --model-path m --tp 2\n");
  ASSERT_TRUE(cmd);
  EXPECT_EQ(cmd->engine, ServingEngine::kSglang);
  EXPECT_EQ(cmd->program, "python3 -m sglang.launch_server");

  EXPECT_FALSE(find_serving_command("torchrun --nproc_per_node 8 pretrain_gpt.py --tp 2\n"));
}

TEST(ServingLog, TellsTheEngineAndTheGpuTotalNeverMeasuredFigures) {
  const EngineLog v1 = read_engine_log(
      {"INFO 07-22 10:00:00 [core.py:1] Initializing a V1 LLM engine (v0.10.1.1) with config: "
       "model='Qwen/Qwen3-8B'",
       "INFO 07-22 10:00:05 [gpu_worker.py:1] Available KV cache memory: 8.11 GiB",
       "ERROR 07-22 10:00:06 [core.py:1] ValueError: Free memory on device (78.57/79.18 GiB) on "
       "startup is less than desired"});
  EXPECT_EQ(v1.generation, VllmGeneration::kV1);
  EXPECT_EQ(v1.version, "0.10.1.1");
  ASSERT_TRUE(v1.gpu_total_gib);
  EXPECT_DOUBLE_EQ(*v1.gpu_total_gib, 79.18);
  EXPECT_EQ(v1.other_lines, 1u);  // the measured KV cache is not read
  const EngineLog v0 =
      read_engine_log({"INFO 12-13 19:54:18 worker.py:243] Memory profiling results:",
                       "INFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB",
                       "INFO 12-13 19:54:18 worker.py:243] gpu_memory_utilization       0.90"});
  EXPECT_EQ(v0.generation, VllmGeneration::kV0);
  EXPECT_DOUBLE_EQ(*v0.gpu_total_gib, 79.22);
  EXPECT_DOUBLE_EQ(*v0.utilization, 0.9);
  EXPECT_EQ(vllm_minor_version("0.6.5"), 6);
  EXPECT_EQ(vllm_minor_version("1.0.0"), -1);
}

}  // namespace
}  // namespace vramplan::interop
