#include "interop/torchtitan/torchtitan_emit.h"

#include <gtest/gtest.h>

#include "vramplan/interop/emit.h"
#include "vramplan/io/estimate_request.h"

namespace vramplan {
namespace {

using nlohmann::json;

SettingsEstimate run(const json& settings) {
  Result<SettingsEstimate> e = estimate_settings(settings, nullptr);
  EXPECT_TRUE(e.ok()) << (e ? "" : e.error().message());
  return e ? *e : SettingsEstimate{};
}

Result<std::string> emitted(const json& settings) {
  Result<SettingsEstimate> e = estimate_settings(settings, nullptr);
  if (!e) return e.error();
  return emit_training(e->resolved.scenario, settings, "torchtitan");
}

json titan(json settings) {
  settings["framework"] = "torchtitan";
  return settings;
}

// Written, read back, estimated: the same peaks, and nothing the reader had to warn about.
void expect_round_trip(const json& settings) {
  const SettingsEstimate direct = run(settings);
  Result<std::string> toml = emitted(settings);
  ASSERT_TRUE(toml.ok()) << toml.error().message();
  const SettingsEstimate back = run({{"from", *toml}});
  ASSERT_TRUE(back.resolved.imported.has_value());
  EXPECT_EQ(back.resolved.imported->format, "torchtitan");
  EXPECT_TRUE(back.resolved.imported->warnings.empty()) << *toml;
  EXPECT_EQ(direct.estimate.peak.allocated_bytes, back.estimate.peak.allocated_bytes) << *toml;
  EXPECT_EQ(direct.estimate.peak.reserved_bytes, back.estimate.peak.reserved_bytes) << *toml;
  EXPECT_EQ(direct.resolved.scenario.parallel.world_size(),
            back.resolved.scenario.parallel.world_size());
}

TEST(TorchtitanEmit, WritesTheJobConfigAndItsLaunchLine) {
  Result<std::string> toml = emitted(
      titan({{"model", "Llama-3.1-8B"}, {"gpus", 16}, {"micro_batch", 2}, {"recompute", "full"}}));
  ASSERT_TRUE(toml.ok()) << toml.error().message();
  EXPECT_NE(toml->find("# torchrun --nproc_per_node 8 --nnodes 2 -m torchtitan.train"),
            std::string::npos);
  EXPECT_NE(toml->find("flavor = \"8B\""), std::string::npos);
  EXPECT_NE(toml->find("data_parallel_shard_degree = 16"), std::string::npos);
  EXPECT_NE(toml->find("mode = \"full\""), std::string::npos);
}

TEST(TorchtitanEmit, RoundTrips) {
  expect_round_trip(titan({{"model", "Llama-3.1-8B"},
                           {"gpus", 8},
                           {"micro_batch", 2},
                           {"seq_len", 8192},
                           {"recompute", "selective-op"}}));
  expect_round_trip(titan({{"model", "Llama-3.1-405B"},
                           {"tp", 8},
                           {"pp", 8},
                           {"vpp", 4},
                           {"gpus", 512},
                           {"micro_batch", 1},
                           {"global_batch", 256},
                           {"recompute", "full"}}));
  expect_round_trip(titan({{"model", "Llama-3.1-8B"},
                           {"gpus", 8},
                           {"recompute", "full"},
                           {"recompute_layers", 10}}));  // every 3rd of 32 layers
  expect_round_trip(titan({{"model", "Qwen3-30B-A3B"},
                           {"gpus", 16},
                           {"ep", 8},
                           {"tp", 2},
                           {"etp", 2},
                           {"recompute", "full"}}));
  expect_round_trip(titan({{"model", "Llama-3.1-8B"},
                           {"gpus", 8},
                           {"tp", 2},
                           {"loss_parallel", false}}));  // disable_loss_parallel = true
}

TEST(TorchtitanEmit, RefusesWhatTorchtitanCannotRun) {
  auto refused = [](const json& settings, const std::string& says) {
    Result<std::string> toml = emitted(settings);
    ASSERT_FALSE(toml.ok()) << settings.dump();
    EXPECT_EQ(toml.error().field, "emit");
    EXPECT_NE(toml.error().message().find(says), std::string::npos) << toml.error().message();
  };
  const json llama = {{"model", "Llama-3.1-8B"}, {"gpus", 8}};
  refused(llama, "conventions");  // no --framework
  refused({{"model", "Llama-3.1-8B"}, {"gpus", 8}, {"framework", "megatron"}}, "megatron");
  refused(titan({{"model", "Llama-3.1-8B"}, {"gpus", 8}, {"fsdp", "none"}, {"zero", 1}}), "ZeRO-1");
  refused(titan({{"model", "Llama-3.1-8B"},
                 {"gpus", 8},
                 {"fsdp", "none"},
                 {"distributed_optimizer", true}}),
          "distributed optimizer");
  refused(titan({{"model", "Llama-3.1-8B"}, {"gpus", 8}, {"allocator_overhead", 0.3}}),
          "allocator_overhead");
  refused(titan({{"model", "gemma-2-2b"}, {"gpus", 8}}), "flavors");
  refused(titan({{"model", "Llama-3.1-8B"},
                 {"gpus", 8},
                 {"recompute", "full"},
                 {"recompute_layers", 12}}),
          "every N-th");
  refused(titan({{"model", "Llama-3.1-8B"}, {"gpus", 8}, {"pp", 2}, {"pipeline_split", "even"}}),
          "splits the layers");
  refused(titan({{"model", "Llama-3.1-8B"}, {"gpus", 1}, {"fsdp", "none"}, {"fp8", "delayed"}}),
          "Transformer Engine");
}

TEST(TorchtitanEmit, MegatronSelectiveHasNoTorchtitanName) {
  // Megatron's selective recompute (the attention core) has no torchtitan switch. (Under
  // --framework torchtitan the word itself means selective-op, so it is reached only through
  // a scenario that says Megatron's meaning outright, as a plan's or another file's.)
  Result<SettingsEstimate> e = estimate_settings(
      titan({{"model", "Llama-3.1-8B"}, {"gpus", 8}, {"recompute", "selective-op"}}), nullptr);
  ASSERT_TRUE(e.ok());
  Scenario s = e->resolved.scenario;
  s.training.recompute = Recompute::kSelective;
  Result<std::string> toml = emit_training(s, json::object(), "torchtitan");
  ASSERT_FALSE(toml.ok());
  EXPECT_NE(toml.error().message().find("attention core"), std::string::npos);
}

}  // namespace
}  // namespace vramplan
