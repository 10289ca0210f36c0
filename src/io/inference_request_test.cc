#include "vramplan/io/inference_request.h"

#include <gtest/gtest.h>

#include "vramplan/io/inference_settings.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/report/inference_report.h"
#include "vramplan/report/settings_report.h"

namespace vramplan {
namespace {

using nlohmann::json;

TEST(InferenceRequest, IsResolveThenEstimateThenFit) {
  const json settings = {{"model", "Llama-3.1-8B"}, {"tp", 2}, {"gpu", "a100-80gb"}};
  Result<SettingsInference> answer = infer_settings(settings, nullptr);
  ASSERT_TRUE(answer.ok()) << answer.error().message();
  Result<ResolvedInference> resolved = resolve_inference(settings, nullptr);
  ASSERT_TRUE(resolved.ok());
  Result<InferenceEstimate> estimate = estimate_inference(resolved->scenario);
  ASSERT_TRUE(estimate.ok());
  EXPECT_EQ(answer->estimate.device_bytes, estimate->device_bytes);
  // The chosen GPU first, then every other catalog GPU once.
  const std::vector<Fit>& fit = answer->estimate.fit;
  ASSERT_EQ(fit.size(), builtin_gpus().gpus.size());
  EXPECT_EQ(fit[0].gpu, "a100-80gb");
  for (size_t i = 1; i < fit.size(); ++i) EXPECT_NE(fit[i].gpu, "a100-80gb");
  EXPECT_EQ(settings_inference_to_json(*answer)["fit"][0]["gpu"], "a100-80gb");
}

TEST(InferenceRequest, ACustomCapacityComesFirst) {
  Result<SettingsInference> answer =
      infer_settings({{"model", "Qwen3-8B"}, {"gpu_memory_gib", 24}}, nullptr);
  ASSERT_TRUE(answer.ok()) << answer.error().message();
  const std::vector<Fit>& fit = answer->estimate.fit;
  ASSERT_EQ(fit.size(), builtin_gpus().gpus.size() + 1);
  EXPECT_EQ(fit[0].usable_bytes, custom_gpu(24).usable_bytes);
}

TEST(InferenceRequest, ResolvingWarningsComeFirst) {
  // Overriding a preset's field is noted while resolving; the estimate's own notes follow.
  Result<SettingsInference> answer =
      infer_settings({{"model", "Llama-3.1-8B"}, {"num_layers", 16}}, nullptr);
  ASSERT_TRUE(answer.ok()) << answer.error().message();
  ASSERT_FALSE(answer->estimate.warnings.empty());
  EXPECT_EQ(answer->estimate.warnings.front(), answer->resolved.warnings.front());
}

TEST(InferenceRequest, ErrorsNameTheSetting) {
  Result<SettingsInference> answer =
      infer_settings({{"model", "Llama-3.1-8B"}, {"tp", 3}}, nullptr);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().field, "tp");
}

}  // namespace
}  // namespace vramplan
