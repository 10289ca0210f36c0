#include "vramplan/perf/hardware.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vramplan {
namespace {

constexpr int64_t kMiB = 1ll << 20;
constexpr int64_t kGiB = 1ll << 30;

TEST(BuiltinGpus, HasEveryCatalogIdInOrder) {
  const std::vector<std::string> expected = {
      "v100-16gb",  "v100-32gb",    "a10-24gb",       "l4-24gb",      "a100-40gb",
      "a100-80gb",  "h100-80gb",    "h100-94gb",      "h100-96gb",    "h100-96gb-hbm2e",
      "h200-141gb", "b200-180gb",   "gb200-186gb",    "mi300x-192gb", "mi325x-256gb",
      "l40s-48gb",  "rtx4090-24gb", "rtx6000ada-48gb"};
  std::vector<std::string> ids;
  for (const Gpu& gpu : builtin_gpus().gpus) ids.push_back(gpu.id);
  EXPECT_EQ(ids, expected);
}

TEST(BuiltinGpus, Gb200NodeIsTheNvl72Rack) {
  // The NVLink domain is what "node" means to the step time and the planner's TP limit.
  const Gpu* gb200 = builtin_gpus().find("gb200-186gb");
  ASSERT_NE(gb200, nullptr);
  EXPECT_EQ(gb200->gpus_per_node, 72);
  EXPECT_EQ(gb200->nvlink_gbps, 900);
  EXPECT_EQ(gb200->peak_tflops(DType::kBf16), 2500);
  EXPECT_EQ(gb200->peak_tflops(DType::kFp8), 5000);
  // Two GPUs share a superchip's NVLink-C2C link to their Grace CPU.
  EXPECT_EQ(gb200->host_link_gbps, 225);
}

TEST(BuiltinGpus, GrandTetonH100IsNotTheGh200Part) {
  // torchtitan's Meta benchmarks ran on Grand Teton hosts (benchmarks/llama3_h100_202412_
  // torchtitan.md, Hardware): 8 NVLink-connected H100s per host, 96GB HBM2e at 2.4 TB/s, 400 Gb/s
  // per GPU, 500 W; the peak is between the SXM's and the NVL's, taken as their midpoint.
  const Gpu* teton = builtin_gpus().find("h100-96gb-hbm2e");
  const Gpu* gh200 = builtin_gpus().find("h100-96gb");
  ASSERT_NE(teton, nullptr);
  ASSERT_NE(gh200, nullptr);
  EXPECT_EQ(teton->gpus_per_node, 8);
  EXPECT_EQ(teton->inter_node_gbps, 50);
  EXPECT_EQ(teton->hbm_gbps, 2400);
  EXPECT_GT(teton->peak_tflops(DType::kBf16),
            builtin_gpus().find("h100-94gb")->peak_tflops(DType::kBf16));
  EXPECT_LT(teton->peak_tflops(DType::kBf16),
            builtin_gpus().find("h100-80gb")->peak_tflops(DType::kBf16));
  EXPECT_EQ(gh200->gpus_per_node, 4);
}

// Attention's tile occupancy needs the SM count of every GPU the step time prices.
TEST(BuiltinGpus, SmCounts) {
  for (const Gpu& gpu : builtin_gpus().gpus) EXPECT_GT(gpu.sm_count, 0) << gpu.id;
  EXPECT_EQ(builtin_gpus().find("h100-80gb")->sm_count, 132);
  EXPECT_EQ(builtin_gpus().find("b200-180gb")->sm_count, 148);
  EXPECT_EQ(builtin_gpus().find("a100-80gb")->sm_count, 108);
}

// The driver's total differs from the marketed decimal GB by ECC, reserved memory and the
// GB/GiB gap (2^30 / 10^9 = 1.074), so usable lands within 10% of nominal for every card.
TEST(BuiltinGpus, UsableIsCloseToNominal) {
  for (const Gpu& gpu : builtin_gpus().gpus) {
    const double ratio = static_cast<double>(gpu.usable_bytes) / gpu.nominal_bytes;
    EXPECT_GT(ratio, 0.9) << gpu.id;
    EXPECT_LT(ratio, 1.1) << gpu.id;
    EXPECT_FALSE(gpu.name.empty()) << gpu.id;
    EXPECT_FALSE(gpu.source.empty()) << gpu.id;
  }
}

TEST(BuiltinGpus, KnownTotalsFromNvidiaSmi) {
  const GpuCatalog& catalog = builtin_gpus();
  EXPECT_EQ(catalog.find("h100-80gb")->usable_bytes, 81559 * kMiB);
  EXPECT_EQ(catalog.find("h100-80gb")->nominal_bytes, 80'000'000'000);
  EXPECT_EQ(catalog.find("h200-141gb")->usable_bytes, 143771 * kMiB);
  EXPECT_EQ(catalog.find("a100-40gb")->usable_bytes, 40960 * kMiB);
  EXPECT_EQ(catalog.find("a100-80gb")->usable_bytes, 81920 * kMiB);
}

TEST(GpuCatalog, FindIsCaseInsensitive) {
  const GpuCatalog& catalog = builtin_gpus();
  ASSERT_NE(catalog.find("H100-80GB"), nullptr);
  EXPECT_EQ(catalog.find("H100-80GB")->id, "h100-80gb");
  EXPECT_EQ(catalog.find("h100"), nullptr);
  EXPECT_EQ(catalog.find(""), nullptr);
}

TEST(GpuCatalog, IdsListsAllForErrorMessages) {
  const std::string ids = builtin_gpus().ids();
  EXPECT_TRUE(ids.starts_with("v100-16gb, v100-32gb, a10-24gb")) << ids;
  EXPECT_TRUE(ids.ends_with("rtx4090-24gb, rtx6000ada-48gb")) << ids;
}

TEST(CustomGpu, CapacityInGiB) {
  const Gpu gpu = custom_gpu(80);
  EXPECT_EQ(gpu.id, "custom-80gib");
  EXPECT_EQ(gpu.usable_bytes, 80 * kGiB);
  EXPECT_EQ(gpu.nominal_bytes, 80 * kGiB);
  EXPECT_EQ(custom_gpu(79.5).id, "custom-79.5gib");
  EXPECT_EQ(custom_gpu(79.5).usable_bytes, 79 * kGiB + kGiB / 2);
}

// Fujii et al.: at or below 80% never ran out, so exactly 80% fits and one byte more is tight.
TEST(FitOn, VerdictBoundaries) {
  const Gpu gpu = custom_gpu(5);  // 5 GiB: 80% is exactly 4 GiB
  EXPECT_EQ(fit_on(gpu, 0).verdict, Verdict::kFits);
  EXPECT_EQ(fit_on(gpu, 4 * kGiB).verdict, Verdict::kFits);
  EXPECT_EQ(fit_on(gpu, 4 * kGiB + 1).verdict, Verdict::kTight);
  EXPECT_EQ(fit_on(gpu, 5 * kGiB).verdict, Verdict::kTight);
  EXPECT_EQ(fit_on(gpu, 5 * kGiB + 1).verdict, Verdict::kOom);
  EXPECT_DOUBLE_EQ(fit_on(gpu, 4 * kGiB).used_fraction, 0.8);
  EXPECT_DOUBLE_EQ(fit_on(gpu, 10 * kGiB).used_fraction, 2.0);
}

TEST(FitOn, CopiesTheGpu) {
  const Gpu* h100 = builtin_gpus().find("h100-80gb");
  const Fit fit = fit_on(*h100, 40 * kGiB);
  EXPECT_EQ(fit.gpu, "h100-80gb");
  EXPECT_EQ(fit.name, h100->name);
  EXPECT_EQ(fit.usable_bytes, h100->usable_bytes);
  EXPECT_EQ(fit.nominal_bytes, h100->nominal_bytes);
  EXPECT_NEAR(fit.used_fraction, 40.0 * 1024 / 81559, 1e-12);
}

TEST(FitTable, EveryGpuInCatalogOrder) {
  const std::vector<Fit> table = fit_table(builtin_gpus(), 30 * kGiB);
  ASSERT_EQ(table.size(), builtin_gpus().gpus.size());
  for (std::size_t i = 0; i < table.size(); ++i) EXPECT_EQ(table[i].gpu, builtin_gpus().gpus[i].id);
  EXPECT_EQ(table.front().verdict, Verdict::kOom);  // v100-16gb
  EXPECT_EQ(builtin_gpus().find("h100-80gb")->id, table[6].gpu);
  EXPECT_EQ(table[6].verdict, Verdict::kFits);
}

TEST(ParseGpuCatalog, ReadsSizesAndIgnoresLaterFields) {
  const Result<GpuCatalog> catalog = parse_gpu_catalog(R"({"gpus": [
    {"id": "x-1", "name": "X", "nominal_gb": 80, "usable_mib": 81559.5, "peak_tflops": 989},
    {"id": "y-2", "name": "Y", "nominal_gb": 1.5, "usable_mib": 1024, "source": "lab"}]})");
  ASSERT_TRUE(catalog.ok()) << catalog.error().message();
  ASSERT_EQ(catalog->gpus.size(), 2u);
  EXPECT_EQ(catalog->gpus[0].usable_bytes, 81559 * kMiB + kMiB / 2);
  EXPECT_EQ(catalog->gpus[0].source, "");
  EXPECT_EQ(catalog->gpus[1].nominal_bytes, 1'500'000'000);
  EXPECT_EQ(catalog->gpus[1].usable_bytes, kGiB);
  EXPECT_EQ(catalog->gpus[1].source, "lab");
}

// Parses `text` and expects it to fail on `field`; returns the error for further checks.
Error parse_error(const std::string& text, const std::string& field) {
  const Result<GpuCatalog> catalog = parse_gpu_catalog(text);
  EXPECT_FALSE(catalog.ok()) << text;
  if (catalog.ok()) return {};
  EXPECT_EQ(catalog.error().field, field) << catalog.error().message();
  return catalog.error();
}

std::string one_gpu(const std::string& fields) { return R"({"gpus": [{)" + fields + "}]}"; }

TEST(ParseGpuCatalog, SyntaxErrorSaysWhere) {
  const Error e = parse_error(R"({"gpus": [ {"id": "x",, } ]})", "gpu catalog");
  EXPECT_NE(e.reason.find("line 1"), std::string::npos) << e.message();
  EXPECT_NE(e.accepted.find("usable_mib"), std::string::npos) << e.message();
}

TEST(ParseGpuCatalog, ShapeErrors) {
  parse_error("[]", "gpus");
  parse_error("{}", "gpus");
  EXPECT_EQ(parse_error(R"({"gpus": {}})", "gpus").value, "{}");
  parse_error(R"({"gpus": [42]})", "gpus[0]");
}

TEST(ParseGpuCatalog, SizeErrorsNameFieldValueAndRange) {
  const std::string ok = R"("id": "a", "name": "A", "nominal_gb": 80, "usable_mib": 81559)";
  const std::string catalog = R"({"gpus": [{)" + ok + R"(}, {"id": "b", "name": "B", )";
  Error e = parse_error(catalog + R"("nominal_gb": 80, "usable_mib": -5}]})", "gpus[1].usable_mib");
  EXPECT_EQ(e.value, "-5");
  EXPECT_NE(e.accepted.find("positive number of MiB"), std::string::npos) << e.message();
  e = parse_error(catalog + R"("nominal_gb": 0, "usable_mib": 5}]})", "gpus[1].nominal_gb");
  EXPECT_EQ(e.value, "0");
  e = parse_error(catalog + R"("nominal_gb": 80, "usable_mib": "81559"}]})", "gpus[1].usable_mib");
  EXPECT_EQ(e.value, "\"81559\"");
  e = parse_error(catalog + R"("nominal_gb": 80}]})", "gpus[1].usable_mib");
  EXPECT_EQ(e.value, "(missing)");
  parse_error(catalog + R"("nominal_gb": 80, "usable_mib": 1e12}]})", "gpus[1].usable_mib");
}

TEST(ParseGpuCatalog, SmCountIsOptionalAndChecked) {
  const std::string sizes = R"("id": "a", "name": "A", "nominal_gb": 80, "usable_mib": 81559)";
  Result<GpuCatalog> catalog = parse_gpu_catalog(one_gpu(sizes));
  ASSERT_TRUE(catalog.ok()) << catalog.error().message();
  EXPECT_EQ(catalog->gpus[0].sm_count, 0);  // not known
  catalog = parse_gpu_catalog(one_gpu(sizes + R"(, "sm_count": 132)"));
  ASSERT_TRUE(catalog.ok()) << catalog.error().message();
  EXPECT_EQ(catalog->gpus[0].sm_count, 132);
  for (const char* bad : {"0", "-4", "1.5", "\"132\"", "1e9"}) {
    const Error e = parse_error(one_gpu(sizes + R"(, "sm_count": )" + bad), "gpus[0].sm_count");
    EXPECT_NE(e.accepted.find("streaming multiprocessors"), std::string::npos) << e.message();
  }
}

TEST(ParseGpuCatalog, IdAndNameErrors) {
  const std::string sizes = R"("nominal_gb": 80, "usable_mib": 81559)";
  parse_error(one_gpu(R"("name": "A", )" + sizes), "gpus[0].id");
  parse_error(one_gpu(R"("id": "", "name": "A", )" + sizes), "gpus[0].id");
  parse_error(one_gpu(R"("id": "h100 80gb", "name": "A", )" + sizes), "gpus[0].id");
  parse_error(one_gpu(R"("id": 7, "name": "A", )" + sizes), "gpus[0].id");
  parse_error(one_gpu(R"("id": "a", )" + sizes), "gpus[0].name");
  parse_error(one_gpu(R"("id": "a", "name": "A", "source": 3, )" + sizes), "gpus[0].source");
}

TEST(ParseGpuCatalog, RejectsDuplicateIdsCaseInsensitively) {
  const std::string sizes = R"("nominal_gb": 80, "usable_mib": 81559)";
  const Error e = parse_error(R"({"gpus": [{"id": "h100", "name": "A", )" + sizes +
                                  R"(}, {"id": "H100", "name": "B", )" + sizes + "}]}",
                              "gpus[1].id");
  EXPECT_EQ(e.value, "\"H100\"");
  EXPECT_NE(e.reason.find("listed twice"), std::string::npos) << e.message();
}

TEST(VerdictName, Names) {
  EXPECT_EQ(verdict_name(Verdict::kFits), "fits");
  EXPECT_EQ(verdict_name(Verdict::kTight), "tight");
  EXPECT_EQ(verdict_name(Verdict::kOom), "oom");
  EXPECT_EQ(counts_toward_name(CountsToward::kAllocated), "allocated");
  EXPECT_EQ(counts_toward_name(CountsToward::kReserved), "reserved");
  EXPECT_EQ(counts_toward_name(CountsToward::kDevice), "device");
}

}  // namespace
}  // namespace vramplan
