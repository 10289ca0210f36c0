#include "vramplan/report/catalog_json.h"

#include <gtest/gtest.h>

#include "vramplan/model/presets.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {
namespace {

TEST(CatalogJson, EveryPresetWithExactCounts) {
  const nlohmann::json models = presets_json();
  ASSERT_EQ(models.size(), presets().size());  // every shipped preset parses
  for (size_t i = 0; i < models.size(); ++i) {
    EXPECT_EQ(models[i]["name"], presets()[i].name);
    EXPECT_EQ(models[i]["hub_id"], presets()[i].hub_id);
    EXPECT_GE(models[i]["total"].get<int64_t>(), models[i]["active"].get<int64_t>());
  }
}

TEST(CatalogJson, EveryGpu) {
  const nlohmann::json gpus = gpus_json();
  ASSERT_EQ(gpus.size(), builtin_gpus().gpus.size());
  EXPECT_EQ(gpus[0]["id"], builtin_gpus().gpus[0].id);
  for (const nlohmann::json& g : gpus) EXPECT_GT(g["usable_bytes"].get<int64_t>(), 0);
}

}  // namespace
}  // namespace vramplan
