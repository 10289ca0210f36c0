#include "interop/megatron/megatron_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "vramplan/interop/import.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/report/settings_report.h"

namespace vramplan {
namespace {

using nlohmann::json;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(VRAMPLAN_SOURCE_DIR) + "/tests/fixtures/imports/megatron/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const FileReader kNoFiles;

// The Llama 3 8B launch script with `args` appended to its last argument array; "" when the
// fixture lacks that array (the test then fails on the empty script).
std::string llama3_script_with(const std::string& args) {
  std::string script = fixture("llama3_8b_pretrain.sh");
  const std::string last = "${LOGGING_ARGS[@]}";
  const size_t at = script.rfind(last);
  if (at == std::string::npos) return "";
  return script.insert(at + last.size(), args);
}

bool warns(const Imported& i, const std::string& text) {
  return std::any_of(i.warnings.begin(), i.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

bool ignored_as(const Imported& i, const std::string& key, const std::string& reason) {
  return std::any_of(i.ignored.begin(), i.ignored.end(), [&](const IgnoredKey& k) {
    return k.key == key && k.reason.find(reason) != std::string::npos;
  });
}

TEST(MegatronImport, ReadsALaunchScriptWithItsArraysAndLauncher) {
  Result<Imported> imported = import_config(fixture("llama3_8b_pretrain.sh"));
  ASSERT_TRUE(imported.ok()) << imported.error().message();
  const json& s = imported->settings;
  EXPECT_EQ(imported->format, "megatron");
  EXPECT_EQ(s["gpus"], 16);  // torchrun --nproc_per_node 8 × --nnodes 2
  EXPECT_EQ(s["tp"], 2);
  EXPECT_EQ(s["pp"], 2);
  EXPECT_EQ(s["seq_len"], 8192);
  EXPECT_EQ(s["micro_batch"], 1);
  EXPECT_EQ(s["global_batch"], 128);
  EXPECT_EQ(s["recompute"], "selective");
  EXPECT_EQ(s["distributed_optimizer"], true);
  EXPECT_EQ(s["sequence_parallel"], true);
  EXPECT_EQ(s["dropout"], false);  // both rates 0.0
  EXPECT_EQ(s["framework"], "megatron");
  EXPECT_EQ(s["gemm_workspace_mib"], 96);  // Transformer Engine, Megatron's default
  const json& m = s["model_config"];
  EXPECT_EQ(m["model_type"], "megatron_gpt");
  EXPECT_EQ(m["num_query_groups"], 8);
  EXPECT_EQ(m["vocab_size"], 128256);  // the tokenizer model is a preset
  EXPECT_TRUE(ignored_as(*imported, "--lr", "no effect on memory"));
  // $1 and $2 are the script's positional arguments: said, not guessed.
  EXPECT_TRUE(warns(*imported, "$1"));
}

TEST(MegatronImport, ItsLlamaIsLlama31_8B) {
  // The Megatron arguments of Llama-3.1-8B's shape count the preset's parameters exactly, and
  // estimate the same memory as the preset with the same settings.
  Result<SettingsEstimate> from =
      estimate_settings({{"from", fixture("llama3_8b_pretrain.sh")}}, kNoFiles);
  ASSERT_TRUE(from.ok()) << from.error().message();
  json same = from->resolved.imported->settings;
  same.erase("model_config");
  same["model"] = "Llama-3.1-8B";
  Result<SettingsEstimate> preset = estimate_settings(same, kNoFiles);
  ASSERT_TRUE(preset.ok()) << preset.error().message();
  EXPECT_EQ(from->estimate.parameters.total, 8030261248);
  EXPECT_EQ(from->estimate.parameters.total, preset->estimate.parameters.total);
  EXPECT_EQ(from->estimate.peak.allocated_bytes, preset->estimate.peak.allocated_bytes);
  const json out = settings_estimate_to_json(*from);
  ASSERT_TRUE(out.contains("imported"));
  EXPECT_EQ(out["imported"]["format"], "megatron");
  EXPECT_GT(out["imported"]["understood"].size(), 20u);
}

TEST(MegatronImport, ReadsAFunctionalTestYaml) {
  Result<Imported> imported = import_config(fixture("moe_functional_test.yaml"));
  ASSERT_TRUE(imported.ok()) << imported.error().message();
  const json& s = imported->settings;
  EXPECT_EQ(imported->format, "megatron-yaml");
  EXPECT_EQ(s["gpus"], 8);
  EXPECT_EQ(s["vpp"], 4);  // 16 layers / pp 2 / 2 per virtual stage
  EXPECT_EQ(s["ep"], 2);
  EXPECT_EQ(s["etp"], 2);  // Megatron: expert tensor parallelism defaults to tp
  EXPECT_EQ(s["recompute"], "full");
  EXPECT_EQ(s["recompute_layers"], 1);
  EXPECT_EQ(s["moe_grouped_gemm"], true);
  EXPECT_EQ(s["loss_bytes_per_logit"], 10);
  EXPECT_EQ(s["model_config"]["vocab_size"], 32001);  // NullTokenizer adds its end-of-document
  EXPECT_TRUE(ignored_as(*imported, "ENV_VARS", "no effect"));
  Result<SettingsEstimate> e =
      estimate_settings({{"from", fixture("moe_functional_test.yaml")}}, kNoFiles);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->resolved.scenario.model.mtp_layers, 1);
  EXPECT_FALSE(e->resolved.scenario.model.moe_layers[0]);
  EXPECT_TRUE(e->resolved.scenario.model.moe_layers[1]);
}

TEST(MegatronImport, ErrorsNameTheArgumentAsWritten) {
  Result<Imported> bad = import_config("--num-layers 4 --tensor-model-parallel-size two");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "--tensor-model-parallel-size");
  EXPECT_EQ(bad.error().value, "two");
  // A layout the model cannot take: the error names the file's argument, not vramplan's key.
  const std::string args =
      "--num-layers 30 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--max-position-embeddings 1024 --vocab-size 1000 --tokenizer-type NullTokenizer "
      "--micro-batch-size 1 --pipeline-model-parallel-size 4";
  Result<SettingsEstimate> e = estimate_settings({{"from", args}, {"gpus", 4}}, kNoFiles);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "--pipeline-model-parallel-size") << e.error().message();
  // Given beside the file, the user's own key is named.
  Result<SettingsEstimate> mine =
      estimate_settings({{"from", args}, {"pp", 4}, {"gpus", 4}}, kNoFiles);
  ASSERT_FALSE(mine.ok());
  EXPECT_EQ(mine.error().field, "pp");
}

TEST(MegatronImport, SettingsBesideTheFileWin) {
  Result<SettingsEstimate> e = estimate_settings(
      {{"from", fixture("llama3_8b_pretrain.sh")}, {"tp", 4}, {"pp", 1}, {"micro_batch", 2}},
      kNoFiles);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->resolved.scenario.parallel.tp, 4);
  EXPECT_EQ(e->resolved.scenario.parallel.pp, 1);
  EXPECT_EQ(e->resolved.scenario.training.micro_batch, 2);
  EXPECT_EQ(e->resolved.scenario.parallel.dp, 4);  // 16 GPUs from the launcher
}

TEST(MegatronImport, OptimizerCpuOffloadAndItsFraction) {
  const std::string script =
      llama3_script_with(" --optimizer-cpu-offload --optimizer-offload-fraction 0.5");
  ASSERT_FALSE(script.empty());
  Result<SettingsEstimate> e = estimate_settings({{"from", script}}, kNoFiles);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->resolved.scenario.offload.optimizer, OffloadTier::kCpu);
  EXPECT_DOUBLE_EQ(e->resolved.scenario.offload.optimizer_fraction, 0.5);
  EXPECT_GT(e->estimate.peak.host_bytes, 0);
}

// --tp-comm-overlap sets the step time's TP overlap; the userbuffers' memory is a warning.
TEST(MegatronImport, TpCommOverlapReachesTheStepTime) {
  const std::string script = llama3_script_with(" --tp-comm-overlap");
  ASSERT_FALSE(script.empty());
  Result<SettingsEstimate> e = estimate_settings({{"from", script}}, kNoFiles);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_TRUE(e->resolved.scenario.conventions.tp_comm_overlap);
  EXPECT_TRUE(warns(*e->resolved.imported, "userbuffers"));
}

// --overlap-moe-expert-parallel-comm (combined 1F1B) sets the step time's EP overlap; the
// second microbatch it keeps in flight is a warning, not counted.
TEST(MegatronImport, EpCommOverlapReachesTheStepTime) {
  const std::string script = llama3_script_with(" --overlap-moe-expert-parallel-comm");
  ASSERT_FALSE(script.empty());
  Result<SettingsEstimate> e = estimate_settings({{"from", script}}, kNoFiles);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_TRUE(e->resolved.scenario.conventions.ep_comm_overlap);
  EXPECT_TRUE(warns(*e->resolved.imported, "--overlap-moe-expert-parallel-comm"));
}

// The token dispatcher reaches the step time; flex takes its backend, deepep by default.
TEST(MegatronImport, TokenDispatcherReachesTheStepTime) {
  const std::pair<const char*, MoeDispatcher> cases[] = {
      {" --moe-token-dispatcher-type alltoall", MoeDispatcher::kAllToAll},
      {" --moe-token-dispatcher-type allgather", MoeDispatcher::kAllGather},
      {" --moe-token-dispatcher-type flex", MoeDispatcher::kDeepEp},
      {" --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep",
       MoeDispatcher::kHybridEp}};
  for (const auto& [args, dispatcher] : cases) {
    const std::string script = llama3_script_with(args);
    ASSERT_FALSE(script.empty());
    Result<SettingsEstimate> e = estimate_settings({{"from", script}}, kNoFiles);
    ASSERT_TRUE(e.ok()) << args << ": " << e.error().message();
    EXPECT_EQ(e->resolved.scenario.conventions.moe_dispatcher, dispatcher) << args;
  }
  // A backend beside a dispatcher that is not flex is listed as ignored, not dropped.
  Result<Imported> imported = import_config(
      llama3_script_with(" --moe-token-dispatcher-type alltoall --moe-flex-dispatcher-backend "
                         "hybridep"));
  ASSERT_TRUE(imported.ok()) << imported.error().message();
  bool listed = false;
  for (const IgnoredKey& k : imported->ignored)
    listed = listed || k.key == "--moe-flex-dispatcher-backend";
  EXPECT_TRUE(listed);
  // An unknown backend is an error naming the user's flag.
  Result<SettingsEstimate> bad = estimate_settings(
      {{"from", llama3_script_with(
                    " --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend nccl")}},
      kNoFiles);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("--moe-flex-dispatcher-backend"), std::string::npos)
      << bad.error().message();
}

TEST(MegatronImport, UnknownTextIsAnErrorNamingFrom) {
  Result<Imported> none = import_config("hello world");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().field, "from");
  Result<Imported> format = import_config("--num-layers 2", "nope");
  ASSERT_FALSE(format.ok());
  EXPECT_EQ(format.error().field, "from_format");
}

}  // namespace
}  // namespace vramplan
