#include "vramplan/model/presets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace vramplan {
namespace {

TEST(PresetsTest, ShipsEveryModelFile) {
  EXPECT_GE(presets().size(), 48u);
  std::set<std::string> names;
  for (const Preset& preset : presets()) {
    EXPECT_FALSE(preset.config.empty()) << preset.name;
    EXPECT_FALSE(preset.hub_id.empty()) << preset.name << " has no entry in hub_ids.json";
    EXPECT_TRUE(names.insert(preset.name).second) << "duplicate " << preset.name;
    EXPECT_EQ(preset.name.find(".json"), std::string::npos) << preset.name;
  }
}

TEST(PresetsTest, SortedByName) {
  EXPECT_TRUE(std::is_sorted(presets().begin(), presets().end(),
                             [](const Preset& a, const Preset& b) { return a.name < b.name; }));
}

TEST(PresetsTest, HubIdsComeFromHubIdsJson) {
  const Preset* gemma = find_preset("gemma-2-2b");
  ASSERT_NE(gemma, nullptr);
  EXPECT_EQ(gemma->hub_id, "google/gemma-2-2b-it");  // the id need not repeat the file name
}

TEST(PresetsTest, FindsByNameIgnoringCase) {
  const Preset* exact = find_preset("Llama-3.1-8B");
  ASSERT_NE(exact, nullptr);
  EXPECT_EQ(exact->name, "Llama-3.1-8B");
  EXPECT_EQ(exact->hub_id, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(find_preset("llama-3.1-8b"), exact);
  EXPECT_EQ(find_preset("LLAMA-3.1-8B"), exact);
}

TEST(PresetsTest, FindsByHubIdIgnoringCase) {
  const Preset* by_name = find_preset("Llama-3.1-8B");
  EXPECT_EQ(find_preset("meta-llama/Llama-3.1-8B"), by_name);
  EXPECT_EQ(find_preset("META-LLAMA/llama-3.1-8b"), by_name);
  EXPECT_EQ(find_preset("openai-community/gpt2"), find_preset("gpt2"));
}

TEST(PresetsTest, UnknownGivesNullptr) {
  EXPECT_EQ(find_preset("no-such-model"), nullptr);
  EXPECT_EQ(find_preset(""), nullptr);
  EXPECT_EQ(find_preset("Llama-3.1-8B.json"), nullptr);
  EXPECT_EQ(find_preset("meta-llama"), nullptr);
}

TEST(PresetsTest, ConfigIsTheFileText) {
  const Preset* gpt2 = find_preset("gpt2");
  ASSERT_NE(gpt2, nullptr);
  EXPECT_NE(gpt2->config.find("\"model_type\": \"gpt2\""), std::string_view::npos);
}

}  // namespace
}  // namespace vramplan
