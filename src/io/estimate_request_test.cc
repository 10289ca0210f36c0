#include "vramplan/io/estimate_request.h"

#include <gtest/gtest.h>

#include "vramplan/perf/hardware.h"
#include "vramplan/report/report.h"
#include "vramplan/report/settings_report.h"

namespace vramplan {
namespace {

using nlohmann::json;

SettingsEstimate run(const json& settings) {
  Result<SettingsEstimate> r = estimate_settings(settings, nullptr);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r.value() : SettingsEstimate{};
}

TEST(EstimateSettings, ChosenGpuFirstThenTheWholeCatalog) {
  const SettingsEstimate r = run({{"model", "Llama-3.1-8B"}, {"gpu", "a100-40gb"}});
  ASSERT_EQ(r.estimate.fit.size(), builtin_gpus().gpus.size());
  EXPECT_EQ(r.estimate.fit[0].gpu, "a100-40gb");
  for (size_t i = 1; i < r.estimate.fit.size(); ++i) EXPECT_NE(r.estimate.fit[i].gpu, "a100-40gb");
}

TEST(EstimateSettings, H100IsTheDefaultGpu) {
  EXPECT_EQ(run({{"model", "Llama-3.1-8B"}}).estimate.fit[0].gpu, "h100-80gb");
}

TEST(EstimateSettings, AGpuOfAnyCapacityComesFirst) {
  const SettingsEstimate r = run({{"model", "Llama-3.1-8B"}, {"gpu_memory_gib", 24}});
  EXPECT_EQ(r.estimate.fit.size(), builtin_gpus().gpus.size() + 1);
  EXPECT_EQ(r.estimate.fit[0].usable_bytes, 24ll << 30);
}

TEST(EstimateSettings, ResolveWarningsComeFirst) {
  const SettingsEstimate r = run({{"model", "Llama-3.1-8B"}, {"num_layers", 30}, {"pp", 2}});
  ASSERT_FALSE(r.estimate.warnings.empty());
  EXPECT_EQ(r.estimate.warnings.front(), r.resolved.warnings.front());
  EXPECT_NE(r.estimate.warnings.front().find("num_layers"), std::string::npos);
}

TEST(EstimateSettings, ErrorsNameTheSetting) {
  for (const auto& [settings, field] : std::vector<std::pair<json, std::string>>{
           {{{"model", "Llama-3.1-8B"}, {"tq", 1}}, "tq"},
           {{{"model", "Llama-3.1-8B"}, {"tp", 3}}, "tp"},
           {{{"model", "Llama-3.1-8B"}, {"gpu", "x"}}, "gpu"}}) {
    Result<SettingsEstimate> r = estimate_settings(settings, nullptr);
    ASSERT_FALSE(r.ok()) << settings.dump();
    EXPECT_EQ(r.error().field, field);
  }
}

TEST(EstimateSettings, JsonIsTheReportOfTheResult) {
  const SettingsEstimate r = run({{"model", "Qwen3-8B"}, {"tp", 2}});
  EXPECT_EQ(settings_estimate_to_json(r), estimate_to_json(r.resolved.scenario, r.estimate));
}

}  // namespace
}  // namespace vramplan
