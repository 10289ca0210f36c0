#include "vramplan/validation/serving_validation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vramplan/serving/inference.h"

namespace vramplan {
namespace {

const ServingCheck* find(const ServingValidation& v, const std::string& id,
                         const std::string& quantity) {
  for (const ServingCheck& c : v.rows)
    if (c.id == id && c.quantity == quantity) return &c;
  return nullptr;
}

TEST(ServingValidation, EveryPublishedFigureIsPredicted) {
  Result<ServingValidation> v = validate_serving();
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_GE(v->rows.size(), 30u);
  for (const ServingCheck& c : v->rows) {
    EXPECT_TRUE(std::isfinite(c.predicted)) << c.id << " " << c.quantity;
    EXPECT_FALSE(c.source.empty()) << c.id;
  }
}

TEST(ServingValidation, VllmLlama3_8BOnOneH100) {
  // The check: vLLM logs 14.96 GiB of weights and 53.29 GiB of KV cache for
  // Meta-Llama-3-8B on one H100 at 0.9. Weights match to the logged digits; the KV cache is off
  // by that version's non-torch figure (1.79 GiB logged, which vLLM 0.6.5 inflated with the
  // allocator's cache; 0.13 GiB in V1's logs).
  Result<ServingValidation> v = validate_serving();
  ASSERT_TRUE(v.ok());
  const ServingCheck* weights = find(*v, "vllm-pr10511-llama3-8b-tp1", "weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_NEAR(weights->predicted, 14.96, 0.005);
  const ServingCheck* kv = find(*v, "vllm-pr10511-llama3-8b-tp1", "KV cache");
  ASSERT_NE(kv, nullptr);
  EXPECT_LT(std::fabs(kv->error_pct()), 3.5);
  const ServingCheck* v1 = find(*v, "llmd-llama-3.1-8b", "KV cache");
  ASSERT_NE(v1, nullptr);
  EXPECT_LT(std::fabs(v1->error_pct()), 1.0);
}

TEST(ServingValidation, AccuracyDoesNotGetWorse) {
  // Today's figures (see docs/serving.md): a guard, not a target.
  Result<ServingValidation> v = validate_serving();
  ASSERT_TRUE(v.ok());
  for (const ServingSummary& s : v->summaries) {
    const double bound = s.quantity == "weights" ? 1.0 : 3.0;
    if (s.quantity == "weights" || s.quantity == "activation peak" || s.quantity == "KV cache") {
      EXPECT_LE(s.median_abs_pct, bound) << s.quantity;
    }
  }
}

}  // namespace
}  // namespace vramplan
