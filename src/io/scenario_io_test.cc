#include "vramplan/io/scenario_io.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

using nlohmann::json;

Result<ResolvedScenario> resolve(const json& settings) {
  return resolve_scenario(settings, nullptr);
}

std::string error_field(const json& settings) {
  auto r = resolve(settings);
  return r.ok() ? "" : r.error().field;
}

TEST(ScenarioIo, TextAndTypedValuesAreTheSame) {
  auto typed = resolve({{"model", "Llama-3.1-8B"}, {"tp", 2}, {"sequence_parallel", false}});
  auto text = resolve({{"model", "llama-3.1-8b"}, {"tp", "2"}, {"sequence_parallel", "off"}});
  ASSERT_TRUE(typed.ok() && text.ok());
  EXPECT_EQ(typed->scenario.parallel.tp, 2);
  EXPECT_EQ(text->scenario.parallel.tp, 2);
  EXPECT_FALSE(text->scenario.parallel.sequence_parallel);
  EXPECT_EQ(text->scenario.model.hidden, 4096);
  EXPECT_TRUE(text->scenario.parallel.loss_parallel);
  auto gathered = resolve({{"model", "Llama-3.1-8B"}, {"tp", 2}, {"loss_parallel", "false"}});
  ASSERT_TRUE(gathered.ok());
  EXPECT_FALSE(gathered->scenario.parallel.loss_parallel);
  EXPECT_EQ(resolve({{"model", "Llama-3.1-8B"}, {"loss_parallel", "maybe"}}).error().field,
            "loss_parallel");
}

TEST(ScenarioIo, HubIdFindsThePreset) {
  auto r = resolve({{"model", "meta-llama/Llama-3.1-8B"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->scenario.model.name, "Llama-3.1-8B");
}

TEST(ScenarioIo, GpusDeriveDataParallelism) {
  auto r = resolve({{"model", "Llama-3.1-8B"}, {"gpus", 64}, {"tp", 4}, {"pp", 2}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->scenario.parallel.dp, 8);
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"gpus", 12}, {"tp", 8}}), "gpus");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"gpus", 16}, {"dp", 4}}), "dp");
}

// HF's gradient_accumulation_steps: the global batch follows the data-parallel degree.
TEST(ScenarioIo, GradientAccumulationMakesTheGlobalBatch) {
  auto r = resolve({{"model", "Llama-3.1-8B"}, {"gpus", 8}, {"micro_batch", 2}, {"grad_accum", 4}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->scenario.training.global_batch, 64);
  auto agreed = resolve({{"model", "Llama-3.1-8B"},
                         {"gpus", 8},
                         {"micro_batch", 2},
                         {"grad_accum", 4},
                         {"global_batch", 64}});
  EXPECT_TRUE(agreed.ok());
  EXPECT_EQ(error_field(
                {{"model", "Llama-3.1-8B"}, {"gpus", 8}, {"grad_accum", 4}, {"global_batch", 16}}),
            "grad_accum");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"grad_accum", 0}}), "grad_accum");
}

// DeepSpeed's reduce bucket and the HF Trainer's foreach AdamW, set one by one.
TEST(ScenarioIo, FrameworkConventionsOneByOne) {
  auto r = resolve({{"model", "Llama-3.1-8B"},
                    {"framework", "deepspeed"},
                    {"comm_bucket_elements", 16777216},
                    {"optimizer_foreach_temporaries", true}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->scenario.conventions.comm_bucket_elements, 16777216);
  EXPECT_TRUE(r->scenario.conventions.optimizer_foreach_temporaries);
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"comm_bucket_elements", -1}}),
            "comm_bucket_elements");
}

// model_code torchtune brings its chunked loss; loss_chunks over it, and out of range.
TEST(ScenarioIo, TorchtuneModelCodeAndLossChunks) {
  auto r = resolve({{"model", "Llama-3.1-8B"}, {"model_code", "torchtune"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->scenario.conventions.model_code, ModelCode::kTorchtune);
  EXPECT_EQ(r->scenario.conventions.loss_chunks, 8);
  auto plain =
      resolve({{"model", "Llama-3.1-8B"}, {"model_code", "torchtune"}, {"loss_chunks", 0}});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->scenario.conventions.loss_chunks, 0);
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"loss_chunks", -1}}), "loss_chunks");
}

TEST(ScenarioIo, VirtualStagesImplyInterleaving) {
  auto r = resolve({{"model", "Llama-3.1-8B"}, {"pp", 2}, {"vpp", 2}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->scenario.parallel.schedule, Schedule::kInterleaved);
  EXPECT_EQ(r->scenario.training.global_batch, 4);  // default fills the pipeline twice
  EXPECT_FALSE(r->warnings.empty());
}

TEST(ScenarioIo, ErrorsNameTheKey) {
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"tp", "abc"}}), "tp");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"param_dtype", "fp12"}}), "param_dtype");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"optimizer", "adamx"}}), "optimizer");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"schedule", "zigzag"}}), "schedule");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"dropout", "maybe"}}), "dropout");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"speed", 3}}), "speed");
  EXPECT_EQ(error_field({{"model", "no-such-model"}}), "model");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"tp", "99999999999999999999"}}), "tp");
  EXPECT_EQ(error_field({{"model", "Llama-3.1-8B"}, {"allocator_overhead", "nan"}}),
            "allocator_overhead");
  EXPECT_EQ(error_field({{"tp", 2}}), "model");  // neither a model nor a full custom architecture
}

TEST(ScenarioIo, CustomArchitectureFromFields) {
  auto r = resolve({{"hidden_size", 4096},
                    {"num_layers", 32},
                    {"num_heads", 32},
                    {"num_kv_heads", 8},
                    {"ffn_size", 14336},
                    {"vocab_size", 128256}});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->scenario.model.head_dim, 128);
  EXPECT_EQ(r->scenario.model.moe_layers.size(), 32u);
  EXPECT_EQ(error_field({{"hidden_size", 0},
                         {"num_layers", 32},
                         {"num_heads", 32},
                         {"ffn_size", 14336},
                         {"vocab_size", 128256}}),
            "hidden_size");
}

TEST(ScenarioIo, OverridingAPresetFieldIsReported) {
  auto r = resolve({{"model", "Llama-3.1-8B"}, {"num_layers", 16}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->scenario.model.num_layers, 16);
  EXPECT_EQ(r->scenario.model.moe_layers.size(), 16u);
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings.front().find("num_layers"), std::string::npos);
}

TEST(ScenarioIo, MakingADenseModelMoe) {
  auto r = resolve({{"model", "Llama-3.2-1B"}, {"num_experts", 8}, {"top_k", 2}});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->scenario.model.is_moe());
  EXPECT_EQ(r->scenario.model.moe.expert_ffn, r->scenario.model.ffn);
  EXPECT_TRUE(r->scenario.model.moe_layers.front());
}

TEST(ScenarioIo, FilesAreReadThroughTheCallerOnly) {
  EXPECT_EQ(error_field({{"model", "/tmp/config.json"}}), "model");
  FileReader reader = [](const std::string&) -> Result<std::string> {
    return std::string(R"({"model_type":"llama","hidden_size":256,"num_hidden_layers":2,
      "num_attention_heads":4,"intermediate_size":512,"vocab_size":1000})");
  };
  auto r = resolve_scenario({{"model", "/tmp/config.json"}}, reader);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->scenario.model.hidden, 256);
}

// Models that are neither presets nor paths go to the caller's fetcher (the Hub, in the CLI);
// presets and paths never do.
TEST(ScenarioIo, OtherModelNamesGoThroughTheFetcher) {
  std::vector<std::string> asked;
  ModelFetcher fetch = [&](const std::string& model) -> Result<std::string> {
    asked.push_back(model);
    if (model != "org/tiny@v1") return Error{"model", model, "a Hub id", "not on the Hub"};
    return std::string(R"({"model_type":"llama","hidden_size":128,"num_hidden_layers":2,
      "num_attention_heads":4,"intermediate_size":256,"vocab_size":1000})");
  };
  FileReader reader = [](const std::string&) -> Result<std::string> {
    return Error{"model", "", "", "no files in this test"};
  };
  auto r = resolve_scenario({{"model", "org/tiny@v1"}}, reader, fetch);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->scenario.model.hidden, 128);
  EXPECT_EQ(r->scenario.model.name, "org/tiny@v1");
  auto missing = resolve_scenario({{"model", "org/other"}}, reader, fetch);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().reason, "not on the Hub");
  EXPECT_TRUE(resolve_scenario({{"model", "meta-llama/Llama-3.1-8B"}}, reader, fetch).ok());
  EXPECT_FALSE(resolve_scenario({{"model", "./config.json"}}, reader, fetch).ok());
  EXPECT_FALSE(resolve_scenario({{"model", ""}}, reader, fetch).ok());
  EXPECT_EQ(asked, (std::vector<std::string>{"org/tiny@v1", "org/other"}));
}

TEST(ScenarioIo, EveryOptionHasHelpAndAFlag) {
  for (const OptionSpec& o : scenario_options()) {
    EXPECT_GT(std::string(o.help).size(), 5u) << o.key;
    EXPECT_EQ(flag_name(o.key).rfind("--", 0), 0u);
  }
  EXPECT_EQ(flag_name("seq_len"), "--seq-len");
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

template <size_t N>
std::string joined(const std::array<const char*, N>& names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

TEST(ScenarioIo, HelpListsTheSameChoicesTheParserAccepts) {
  const std::pair<const char*, std::string> tables[] = {
      {"recompute", joined(kRecomputeNames)},
      {"optimizer", joined(kOptimizerNames)},
      {"schedule", joined(kScheduleNames)},
      {"fsdp", joined(kFsdpNames)},
      {"moe_dispatcher", joined(kMoeDispatcherNames)}};
  for (const auto& [key, names] : tables)
    for (const OptionSpec& o : scenario_options())
      if (std::string(o.key) == key) {
        EXPECT_EQ(o.choices, names) << key;
      }
}

}  // namespace
}  // namespace vramplan
