#include "vramplan/io/roofline_settings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "vramplan/report/roofline_report.h"

namespace vramplan {
namespace {

using nlohmann::json;

SettingsRoofline run(const json& settings) {
  Result<SettingsRoofline> r = roofline_settings(settings, nullptr);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r.value() : SettingsRoofline{};
}

TEST(RooflineSettings, H100AndItsCatalogNodeByDefault) {
  const SettingsRoofline r = run({{"model", "Llama-3.1-8B"}, {"gpus", 8}});
  EXPECT_EQ(r.gpu.id, "h100-80gb");
  const Cluster node = default_cluster(r.gpu);
  EXPECT_EQ(r.cluster.gpus_per_node, node.gpus_per_node);
  EXPECT_EQ(r.cluster.intra_node_gbps, node.intra_node_gbps);
  EXPECT_EQ(r.cluster.inter_node_gbps, node.inter_node_gbps);
  EXPECT_GT(r.step.step_time_s, 0);
}

TEST(RooflineSettings, ClusterKeysTypedOrTextOverrideTheCatalog) {
  const SettingsRoofline r = run({{"model", "Llama-3.1-8B"},
                                  {"gpus", 8},
                                  {"gpus_per_node", "4"},
                                  {"intra_node_gbps", 100},
                                  {"inter_node_gbps", "12.5"}});
  EXPECT_EQ(r.cluster.gpus_per_node, 4);
  EXPECT_EQ(r.cluster.intra_node_gbps, 100);
  EXPECT_EQ(r.cluster.inter_node_gbps, 12.5);
}

TEST(RooflineSettings, ErrorsNameTheKeyAsWritten) {
  const json llama = {{"model", "Llama-3.1-8B"}};
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, json>>{{"gpus_per_node", 0},
                                                 {"gpus_per_node", "many"},
                                                 {"intra_node_gbps", 0},
                                                 {"inter_node_gbps", -1},
                                                 {"gpu", "nope"},
                                                 {"gpu_memory_gib", 80},
                                                 {"tp", 3}}) {
    json settings = llama;
    settings[key] = value;
    Result<SettingsRoofline> r = roofline_settings(settings, nullptr);
    ASSERT_FALSE(r.ok()) << settings.dump();
    EXPECT_EQ(r.error().field, key) << settings.dump();
    EXPECT_FALSE(r.error().accepted.empty()) << settings.dump();
  }
}

TEST(RooflineSettings, AnUnknownKeyListsTheClusterKeysAmongTheAccepted) {
  Result<SettingsRoofline> r = roofline_settings({{"model", "Llama-3.1-8B"}, {"gpn", 4}}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "gpn");
  EXPECT_NE(r.error().accepted.find("inter_node_gbps"), std::string::npos);
  EXPECT_NE(r.error().accepted.find("seq_len"), std::string::npos);
  // Found by fuzzing: an empty key is still named.
  Result<SettingsRoofline> empty = roofline_settings({{"", "OLMo-2-1124-7B"}}, nullptr);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().field, "\"\"");
}

TEST(RooflineSettings, JsonIsTheRooflineReportWithTheWarnings) {
  const SettingsRoofline r = run({{"model", "Llama-3.1-8B"}, {"num_layers", 30}, {"pp", 2}});
  json expected = roofline_to_json(r.roofline, r.step, r.cluster);
  expected["warnings"] = r.resolved.warnings;
  EXPECT_EQ(settings_roofline_to_json(r), expected);
  EXPECT_FALSE(r.resolved.warnings.empty());
}

}  // namespace
}  // namespace vramplan
