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

// "formulas": false (estimate_output_options) is the planner's fast path: every number the same,
// the formula strings left out.
TEST(EstimateSettings, WithoutFormulasTheNumbersStay) {
  const SettingsEstimate full = run({{"model", "Llama-3.1-8B"}, {"pp", 2}, {"gpus", 2}});
  const SettingsEstimate lean =
      run({{"model", "Llama-3.1-8B"}, {"pp", 2}, {"gpus", 2}, {"formulas", false}});
  ASSERT_EQ(lean.estimate.stages.size(), full.estimate.stages.size());
  for (size_t s = 0; s < full.estimate.stages.size(); ++s) {
    const auto& a = full.estimate.stages[s].rows;
    const auto& b = lean.estimate.stages[s].rows;
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].component, b[i].component);
      EXPECT_EQ(a[i].bytes, b[i].bytes) << a[i].component;
      EXPECT_FALSE(a[i].formula.empty()) << a[i].component;
      EXPECT_TRUE(b[i].formula.empty()) << b[i].component;
    }
  }
  EXPECT_EQ(lean.estimate.peak.device_bytes, full.estimate.peak.device_bytes);
  EXPECT_EQ(run({{"model", "Llama-3.1-8B"}, {"formulas", true}}).estimate.stages[0].rows[0].formula,
            run({{"model", "Llama-3.1-8B"}}).estimate.stages[0].rows[0].formula);
}

TEST(EstimateSettings, FormulasMustBeABool) {
  Result<SettingsEstimate> r =
      estimate_settings({{"model", "Llama-3.1-8B"}, {"formulas", "sometimes"}}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "formulas");
  EXPECT_EQ(r.error().value, "sometimes");
}

// Each top-level key built alone is that key of the whole JSON (Python reads them so).
TEST(EstimateSettings, PartsAreTheWholeJsonsKeys) {
  const SettingsEstimate r = run({{"model", "Qwen3-8B"}, {"tp", 2}, {"pp", 2}, {"gpus", 4}});
  const json whole = settings_estimate_to_json(r);
  std::vector<std::string> keys;
  for (auto it = whole.begin(); it != whole.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(settings_estimate_keys(r), keys);
  for (const std::string& key : keys) EXPECT_EQ(settings_estimate_part(r, key), whole[key]) << key;
}

}  // namespace
}  // namespace vramplan
