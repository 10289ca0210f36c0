#include "vramplan/io/framework_vocabulary.h"

#include <gtest/gtest.h>

#include "vramplan/io/estimate_request.h"

namespace vramplan {
namespace {

using nlohmann::json;

std::vector<VocabularyNote> read(json& settings) {
  return read_framework_words(settings, settings);
}

TEST(FrameworkVocabulary, TorchtitansSelectiveIsItsOpLevelPolicy) {
  json s = {{"framework", "torchtitan"}, {"recompute", "selective"}};
  const std::vector<VocabularyNote> notes = read(s);
  EXPECT_EQ(s["recompute"], "selective-op");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].framework, "torchtitan");
  EXPECT_NE(notes[0].text().find("op-level"), std::string::npos);
  EXPECT_NE(notes[0].others.find("megatron: recompute = selective"), std::string::npos);
}

TEST(FrameworkVocabulary, AWordOfSeveralMeaningsSaysWhichWasTaken) {
  json megatron = {{"framework", "megatron"}, {"recompute", "selective"}};
  ASSERT_EQ(read(megatron).size(), 1u);
  EXPECT_EQ(megatron["recompute"], "selective");
  json none = {{"recompute", "selective"}};
  const std::vector<VocabularyNote> notes = read(none);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].framework, "");
  EXPECT_NE(notes[0].text().find("vramplan's own"), std::string::npos);
  EXPECT_NE(notes[0].text().find("torchtitan: recompute = selective-op"), std::string::npos);
  // Words of one meaning everywhere are left alone, unnoted.
  json full = {{"framework", "torchtitan"}, {"recompute", "full"}};
  EXPECT_TRUE(read(full).empty());
}

TEST(FrameworkVocabulary, OtherFrameworksWords) {
  json hf = {{"framework", "hf-trainer"}, {"recompute", "gradient_checkpointing"}};
  read(hf);
  EXPECT_EQ(hf["recompute"], "full");
  json uniform = {{"framework", "megatron"}, {"recompute", "uniform"}};
  read(uniform);
  EXPECT_EQ(uniform["recompute"], "full");
}

TEST(FrameworkVocabulary, OnlyTheUsersOwnWordsAreRead) {
  // A file's settings are in vramplan's values already: only what the user gave is read.
  json settings = {{"framework", "torchtitan"}, {"recompute", "selective"}};
  EXPECT_TRUE(read_framework_words(settings, json{{"gpus", 8}}).empty());
  EXPECT_EQ(settings["recompute"], "selective");
}

TEST(FrameworkVocabulary, TheIssuesTrap) {
  // Llama-3.1-8B, FSDP on 8 GPUs, local batch 2, seq 8192: torchtitan's selective is its
  // op-level policy, which predicts 80.5 GiB (measured 82.4), not Megatron's 141.6.
  const json settings = {
      {"model", "Llama-3.1-8B"}, {"framework", "torchtitan"}, {"gpus", 8},
      {"micro_batch", 2},        {"seq_len", 8192},           {"recompute", "selective"}};
  Result<SettingsEstimate> e = estimate_settings(settings, nullptr);
  ASSERT_TRUE(e.ok());
  json op = settings;
  op["recompute"] = "selective-op";
  Result<SettingsEstimate> same = estimate_settings(op, nullptr);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(e->estimate.peak.reserved_bytes, same->estimate.peak.reserved_bytes);
  EXPECT_NEAR(static_cast<double>(e->estimate.peak.reserved_bytes) / (1 << 30), 80.5, 0.1);
  ASSERT_EQ(e->resolved.vocabulary.size(), 1u);
  EXPECT_NE(e->estimate.warnings.front().find("torchtitan's meaning"), std::string::npos);
}

}  // namespace
}  // namespace vramplan
