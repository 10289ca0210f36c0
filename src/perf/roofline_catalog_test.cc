// The GPU catalog's speed fields (hardware.h): present and consistent for every built-in GPU,
// optional and validated by name in catalog files.
#include <gtest/gtest.h>

#include <string>

#include "vramplan/perf/hardware.h"

namespace vramplan {
namespace {

TEST(GpuSpeeds, EveryBuiltinGpuHasThem) {
  for (const Gpu& g : builtin_gpus().gpus) {
    EXPECT_GT(g.peak_tflops(DType::kFp16), 0) << g.id;
    EXPECT_GT(g.fp32_tflops, 0) << g.id;
    EXPECT_GT(g.hbm_gbps, 0) << g.id;
    EXPECT_GT(g.nvlink_gbps, 0) << g.id;
    EXPECT_GT(g.inter_node_gbps, 0) << g.id;
    EXPECT_GE(g.gpus_per_node, 1) << g.id;
    EXPECT_FALSE(g.speed_source.empty()) << g.id;
    // Each narrower format doubles the dense rate where the tensor cores support it.
    if (g.fp8_tflops > 0) {
      EXPECT_NEAR(g.fp8_tflops / g.bf16_tflops, 2, 0.05) << g.id;
    }
    if (g.fp4_tflops > 0) {
      EXPECT_NEAR(g.fp4_tflops / g.fp8_tflops, 2, 0.05) << g.id;
    }
    if (g.tf32_tflops > 0) {
      EXPECT_NEAR(g.bf16_tflops / g.tf32_tflops, 2, 0.05) << g.id;
    }
  }
}

TEST(GpuSpeeds, DatasheetValues) {
  const Gpu& h100 = *builtin_gpus().find("h100-80gb");
  EXPECT_EQ(h100.bf16_tflops, 989.4);  // 1,979 with 2:4 sparsity
  EXPECT_EQ(h100.fp8_tflops, 1978.9);
  EXPECT_EQ(h100.fp4_tflops, 0);
  EXPECT_EQ(h100.hbm_gbps, 3350);
  EXPECT_EQ(h100.nvlink_gbps, 450);  // 900 GB/s both directions
  EXPECT_EQ(builtin_gpus().find("b200-180gb")->fp4_tflops, 9000);
  const Gpu& v100 = *builtin_gpus().find("v100-16gb");
  EXPECT_EQ(v100.peak_tflops(DType::kBf16), 0);  // no bf16 tensor cores
  EXPECT_EQ(v100.peak_tflops(DType::kFp16), 125);
  EXPECT_EQ(h100.peak_tflops(DType::kFp16), 989.4);  // fp16 defaults to the bf16 rate
  EXPECT_EQ(h100.peak_tflops(DType::kFp32), 494.7);  // tf32 tensor cores
}

std::string catalog(const std::string& extra) {
  return R"({"gpus": [{"id": "x", "name": "X", "nominal_gb": 80, "usable_mib": 81000)" + extra +
         "}]}";
}

TEST(GpuSpeeds, OptionalInCatalogFiles) {
  Result<GpuCatalog> old = parse_gpu_catalog(catalog(""));
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_EQ(old->gpus[0].bf16_tflops, 0);
  EXPECT_EQ(old->gpus[0].gpus_per_node, 8);
  Result<GpuCatalog> full = parse_gpu_catalog(
      catalog(R"(, "bf16_tflops": 100, "fp8_tflops": null, "hbm_gbps": 1000, "gpus_per_node": 4,
               "inter_node_gbps": 12.5, "speed_source": "mine")"));
  ASSERT_TRUE(full.ok()) << full.error().message();
  EXPECT_EQ(full->gpus[0].bf16_tflops, 100);
  EXPECT_EQ(full->gpus[0].fp8_tflops, 0);
  EXPECT_EQ(full->gpus[0].gpus_per_node, 4);
  EXPECT_EQ(full->gpus[0].speed_source, "mine");
}

TEST(GpuSpeeds, BadValuesNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"(, "bf16_tflops": -1)", "gpus[0].bf16_tflops"},
      {R"(, "hbm_gbps": "fast")", "gpus[0].hbm_gbps"},
      {R"(, "fp4_tflops": 1e300)", "gpus[0].fp4_tflops"},
      {R"(, "gpus_per_node": 0)", "gpus[0].gpus_per_node"},
      {R"(, "gpus_per_node": 1.5)", "gpus[0].gpus_per_node"},
      {R"(, "speed_source": 3)", "gpus[0].speed_source"},
  };
  for (const auto& [extra, field] : cases) {
    Result<GpuCatalog> c = parse_gpu_catalog(catalog(extra));
    ASSERT_FALSE(c.ok()) << extra;
    EXPECT_EQ(c.error().field, field) << extra;
    EXPECT_FALSE(c.error().accepted.empty()) << extra;
  }
}

}  // namespace
}  // namespace vramplan
