#include "vramplan/report/report.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace vramplan {
namespace {

constexpr int64_t kMiB = 1ll << 20;
constexpr int64_t kGiB = 1ll << 30;

// A formula with a comma and a quote, to exercise CSV quoting.
constexpr char kActivationFormula[] =
    "s·b·h·(34/t + 5·a·s/(h·t)) = 4096·1·4096·(34/2 + 5·32·4096/(4096·2)), \"paper\" form "
    "summed over 16 layers with 2 microbatches in flight";

Scenario small_scenario() {
  Scenario s;
  s.model.name = "Test-8B";
  s.model.model_type = "llama";
  s.model.hidden = 4096;
  s.model.num_layers = 32;
  s.model.num_heads = 32;
  s.model.num_kv_heads = 8;
  s.model.head_dim = 128;
  s.model.ffn = 14336;
  s.model.vocab = 128256;
  s.model.moe_layers.assign(32, false);
  s.model.layer_attention.assign(32, LayerAttention::kFull);
  s.parallel.tp = 2;
  s.parallel.pp = 2;
  s.parallel.dp = 4;
  s.parallel.zero = 1;
  s.training.global_batch = 32;
  return s;
}

Row row(std::string component, int64_t bytes, CountsToward counts, std::string formula) {
  return Row{std::move(component), bytes, counts, std::move(formula), "Korthikanti et al. 2022"};
}

// Two pipeline stages, hand-made: totals are the sums of the rows they nest.
Estimate small_estimate() {
  Estimate e;
  e.parameters.total = 8'030'261'248;
  e.parameters.active = 8'030'261'248;
  e.parameters.embedding = 525'336'576;
  e.parameters.lm_head = 525'336'576;
  e.parameters.breakdown = {{"embedding", 525'336'576}, {"attention", 1'342'177'280}};
  e.world_size = 16;
  e.microbatches = 8;

  StageEstimate first;
  first.name = "stage 1 of 2 (first)";
  first.ranks = {0};
  first.layers = 16;
  for (int64_t i = 0; i < 16; ++i) first.layer_ids.push_back(i);
  first.in_flight_microbatches = 2;
  first.rows = {row("weights", 4 * kGiB, CountsToward::kAllocated, "2 B × 2.01 B params"),
                row("activations", 10 * kGiB, CountsToward::kAllocated, kActivationFormula),
                row("allocator pool", 1 * kGiB + 512 * kMiB, CountsToward::kReserved, "10%"),
                row("cuda context", 600 * kMiB, CountsToward::kDevice, "")};
  first.allocated_bytes = 14 * kGiB;
  first.reserved_bytes = 15 * kGiB + 512 * kMiB;
  first.device_bytes = first.reserved_bytes + 600 * kMiB;

  StageEstimate last;
  last.name = "stage 2 of 2 (last)";
  last.ranks = {1};
  last.layers = 16;
  for (int64_t i = 16; i < 32; ++i) last.layer_ids.push_back(i);
  last.in_flight_microbatches = 1;
  last.rows = {row("weights", 4 * kGiB, CountsToward::kAllocated, "2 B × 2.01 B params"),
               row("logits", 3 * kGiB, CountsToward::kAllocated, "s·b·V/t | fp32 copy"),
               row("cuda context", 600 * kMiB, CountsToward::kDevice, "")};
  last.allocated_bytes = 7 * kGiB;
  last.reserved_bytes = 7 * kGiB;
  last.device_bytes = 7 * kGiB + 600 * kMiB;

  e.stages = {first, last};
  e.peak = Peak{0,
                first.allocated_bytes,
                first.reserved_bytes,
                first.device_bytes,
                13 * kGiB,
                16 * kGiB,
                14 * kGiB,
                18 * kGiB,
                15 * kGiB,
                19 * kGiB};
  e.fit = {
      Fit{"h100-80gb", "NVIDIA H100 80GB", 80'000'000'000, 81559 * kMiB, 0.205, Verdict::kFits},
      Fit{"l4-24gb", "NVIDIA L4", 24'000'000'000, 23034 * kMiB, 0.71 * 1.2, Verdict::kTight},
      Fit{"v100-16gb", "NVIDIA V100 16GB", 16'000'000'000, 16160 * kMiB, 1.04, Verdict::kOom}};
  e.warnings = {"fewer microbatches (8) than the pipeline can overlap; the bubble is large"};
  return e;
}

std::vector<std::string> keys(const nlohmann::json& object) {
  std::vector<std::string> names;
  for (const auto& [key, value] : object.items()) names.push_back(key);
  return names;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int columns(const std::string& line) {
  int n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

TEST(EstimateToJson, TopLevelKeys) {
  const nlohmann::json j = estimate_to_json(small_scenario(), small_estimate());
  EXPECT_EQ(keys(j), (std::vector<std::string>{"fit", "microbatches", "parameters", "peak",
                                               "scenario", "stages", "warnings", "world_size"}));
  EXPECT_EQ(j["world_size"], 16);
  EXPECT_EQ(j["microbatches"], 8);
  EXPECT_EQ(j["warnings"][0], small_estimate().warnings[0]);
}

TEST(EstimateToJson, Parameters) {
  const nlohmann::json p = estimate_to_json(small_scenario(), small_estimate())["parameters"];
  EXPECT_EQ(keys(p), (std::vector<std::string>{"active", "breakdown", "embedding", "lm_head", "mtp",
                                               "total"}));
  EXPECT_EQ(p["total"], 8'030'261'248);
  EXPECT_EQ(p["mtp"], 0);
  EXPECT_EQ(p["breakdown"][1]["name"], "attention");
  EXPECT_EQ(p["breakdown"][1]["count"], 1'342'177'280);
}

TEST(EstimateToJson, StagesAndRows) {
  const nlohmann::json stage = estimate_to_json(small_scenario(), small_estimate())["stages"][0];
  EXPECT_EQ(keys(stage),
            (std::vector<std::string>{
                "allocated_bytes", "allocated_bytes_high", "allocated_bytes_low", "device_bytes",
                "device_bytes_high", "device_bytes_low", "disk_bytes", "host_bytes",
                "in_flight_microbatches", "layer_ids", "layers", "name", "peak_phase", "phases",
                "ranks", "reserved_bytes", "reserved_bytes_high", "reserved_bytes_low", "rows"}));
  EXPECT_EQ(stage["name"], "stage 1 of 2 (first)");
  EXPECT_EQ(stage["ranks"], nlohmann::json::array({0}));
  EXPECT_EQ(stage["layer_ids"].size(), 16u);
  EXPECT_EQ(stage["in_flight_microbatches"], 2);
  EXPECT_EQ(stage["allocated_bytes"], 14 * kGiB);
  const nlohmann::json r = stage["rows"][2];
  EXPECT_EQ(keys(r), (std::vector<std::string>{"bytes", "bytes_high", "bytes_low", "component",
                                               "counts_toward", "formula", "source"}));
  EXPECT_TRUE(r["bytes"].is_number_integer());
  EXPECT_EQ(r["bytes"], kGiB + 512 * kMiB);
  EXPECT_EQ(r["counts_toward"], "reserved");
  EXPECT_EQ(r["component"], "allocator pool");
  EXPECT_EQ(r["source"], "Korthikanti et al. 2022");
}

TEST(EstimateToJson, PeakNamesTheStage) {
  const nlohmann::json peak = estimate_to_json(small_scenario(), small_estimate())["peak"];
  EXPECT_EQ(peak["stage"], "stage 1 of 2 (first)");
  EXPECT_EQ(peak["stage_index"], 0);
  EXPECT_EQ(peak["reserved_bytes"], 15 * kGiB + 512 * kMiB);
  EXPECT_EQ(peak["device_bytes"], 15 * kGiB + 1112 * kMiB);
  EXPECT_EQ(peak["allocated_bytes_low"], 13 * kGiB);
  EXPECT_EQ(peak["allocated_bytes_high"], 16 * kGiB);
  EXPECT_EQ(peak["reserved_bytes_low"], 14 * kGiB);
  EXPECT_EQ(peak["device_bytes_high"], 19 * kGiB);
}

TEST(EstimateToJson, Fit) {
  const nlohmann::json fit = estimate_to_json(small_scenario(), small_estimate())["fit"];
  ASSERT_EQ(fit.size(), 3u);
  EXPECT_EQ(fit[0]["gpu"], "h100-80gb");
  EXPECT_EQ(fit[0]["usable_bytes"], 81559 * kMiB);
  EXPECT_DOUBLE_EQ(fit[0]["used_fraction"].get<double>(), 0.205);
  EXPECT_EQ(fit[1]["verdict"], "tight");
  EXPECT_EQ(fit[2]["verdict"], "oom");
}

TEST(EstimateToJson, ScenarioEchoesResolvedInputs) {
  Scenario s = small_scenario();
  s.model.moe_layers[3] = true;
  s.training.optimizer = Optimizer::kSgdMomentum;
  s.training.recompute = Recompute::kSelective;
  s.training.param_dtype = DType::kFp8;
  s.parallel.schedule = Schedule::kInterleaved;
  s.parallel.fsdp = FsdpMode::kHybridShard;
  const nlohmann::json j = estimate_to_json(s, small_estimate())["scenario"];
  EXPECT_EQ(keys(j), (std::vector<std::string>{"conventions", "finetune", "model", "offload",
                                               "overheads", "parallel", "training"}));
  EXPECT_EQ(j["conventions"]["framework"], "none");
  EXPECT_EQ(j["conventions"]["gated_mlp_tensors"], 3);
  EXPECT_EQ(j["model"]["name"], "Test-8B");
  EXPECT_EQ(j["model"]["model_type"], "llama");
  EXPECT_EQ(j["model"]["hidden"], 4096);
  EXPECT_EQ(j["model"]["num_kv_heads"], 8);
  EXPECT_EQ(j["model"]["moe_layers"], nlohmann::json::array({3}));
  EXPECT_EQ(j["model"]["attention"], "standard");
  EXPECT_EQ(j["training"]["optimizer"], "sgd-momentum");
  EXPECT_EQ(j["training"]["recompute"], "selective");
  EXPECT_EQ(j["training"]["param_dtype"], "fp8");
  EXPECT_EQ(j["training"]["optimizer_state_dtype"], "fp32");
  EXPECT_EQ(j["parallel"]["schedule"], "interleaved");
  EXPECT_EQ(j["parallel"]["fsdp"], "hybrid_shard");
  EXPECT_EQ(j["parallel"]["tp"], 2);
  EXPECT_EQ(j["parallel"]["world_size"], 16);
  EXPECT_EQ(j["overheads"]["cuda_context_bytes"], 600 * kMiB);
  EXPECT_DOUBLE_EQ(j["overheads"]["allocator_fraction"].get<double>(), 0.10);
}

TEST(EstimateToJson, DefaultEnumNames) {
  const nlohmann::json j = estimate_to_json(small_scenario(), small_estimate())["scenario"];
  EXPECT_EQ(j["training"]["optimizer"], "adamw");
  EXPECT_EQ(j["training"]["recompute"], "none");
  EXPECT_EQ(j["parallel"]["schedule"], "1f1b");
  EXPECT_EQ(j["parallel"]["fsdp"], "none");
  EXPECT_EQ(j["model"]["mlp"], "gated");
  EXPECT_EQ(j["model"]["norm"], "rmsnorm");
}

TEST(RenderCsv, QuotesCommasAndQuotes) {
  const std::string csv = render_csv(small_estimate());
  const std::vector<std::string> l = lines(csv);
  ASSERT_EQ(l.size(), 1u + 4 + 3);
  EXPECT_EQ(l[0], "stage,component,bytes,gib,counts_toward,formula,source");
  EXPECT_EQ(l[1],
            "stage 1 of 2 (first),weights,4294967296,4.0000,allocated,2 B × 2.01 B params,"
            "Korthikanti et al. 2022");
  // The formula holds a comma and quotes: the field is quoted and its quotes doubled.
  EXPECT_NE(l[2].find(",\"s·b·h·(34/t + 5·a·s/(h·t)) = 4096·1·4096·(34/2 + 5·32·4096/(4096·2)), "
                      "\"\"paper\"\" form summed"),
            std::string::npos)
      << l[2];
  EXPECT_TRUE(l[4].starts_with("stage 1 of 2 (first),cuda context,629145600,0.5859,device,,"))
      << l[4];
}

TEST(RenderMarkdown, HasTablesForStagesAndFit) {
  const std::string md = render_markdown(small_scenario(), small_estimate());
  EXPECT_NE(md.find("# vramplan: Test-8B (llama)"), std::string::npos);
  EXPECT_NE(md.find("| component | GiB | bytes | counts toward | formula | source |\n|---|"),
            std::string::npos);
  EXPECT_NE(md.find("## stage 2 of 2 (last)"), std::string::npos);
  EXPECT_NE(md.find("| activations | 10.00 | 10737418240 | allocated |"), std::string::npos);
  EXPECT_NE(md.find("`s·b·V/t \\| fp32 copy`"), std::string::npos) << "pipes escaped";
  EXPECT_NE(md.find("| **total device** | **16.09** |"), std::string::npos) << md;
  EXPECT_NE(md.find("| v100-16gb | NVIDIA V100 16GB | 15.78 | 104.0% | oom |"), std::string::npos);
  EXPECT_NE(md.find("stage 1 of 2 (first): 14.00 GiB allocated (likely 13.00–16.00) · 15.50 GiB "
                    "reserved (likely 14.00–18.00)"),
            std::string::npos);
  EXPECT_NE(md.find("## Warnings\n\n- fewer microbatches"), std::string::npos);
}

TEST(RenderTable, ShowsEveryComponentPeakAndVerdict) {
  const std::string table = render_table(small_scenario(), small_estimate());
  for (const char* text : {"weights",
                           "activations",
                           "allocator pool",
                           "cuda context",
                           "logits",
                           "Test-8B (llama)",
                           "8.03 B total",
                           "tp 2",
                           "pp 2 (1f1b)",
                           "dp 4",
                           "= 16 GPUs",
                           "ZeRO-1",
                           "peak · stage 1 of 2 (first)",
                           "14.00 GiB allocated (likely 13.00–16.00)",
                           "device (likely 15.00–19.00)",
                           "h100-80gb",
                           "fits",
                           "tight",
                           "oom",
                           "fewer microbatches",
                           "pipeline rank 0",
                           "16 layers (0–15)",
                           "2 microbatches in flight",
                           "total reserved"}) {
    EXPECT_NE(table.find(text), std::string::npos) << text << "\n" << table;
  }
  EXPECT_EQ(table.find("\x1b["), std::string::npos) << "no colour unless asked";
}

TEST(RenderTable, WrapsLongFormulasWithinTheWidthAndKeepsTheNumbers) {
  for (int width : {100, 80}) {
    const std::string table = render_table(small_scenario(), small_estimate(), {.width = width});
    for (const std::string& line : lines(table)) {
      EXPECT_LE(columns(line), width) << line;
    }
    // Every word of the long formula survives the wrapping.
    for (const char* word : {"s·b·h·(34/t", "4096·1·4096·(34/2", "\"paper\"", "in", "flight"}) {
      EXPECT_NE(table.find(word), std::string::npos) << word;
    }
    EXPECT_NE(table.find("10.00"), std::string::npos);
  }
}

TEST(RenderTable, BarsShareOneScale) {
  const std::string table = render_table(small_scenario(), small_estimate(), {.width = 100});
  // Stage 1 (16.09 GiB) is the widest bar; stage 2 (7.59 GiB) about half as long.
  int first = 0, second = 0;
  for (const std::string& line : lines(table)) {
    int cells = 0;
    for (const char* glyph : {"█", "▓", "▒", "░", "▚"}) {
      for (std::size_t p = line.find(glyph); p != std::string::npos; p = line.find(glyph, p + 1)) {
        ++cells;
      }
    }
    if (line.starts_with("  stage 1 of 2 (first) ")) first = cells;
    if (line.starts_with("  stage 2 of 2 (last) ")) second = cells;
  }
  ASSERT_GT(first, 0) << table;
  EXPECT_NEAR(static_cast<double>(second) / first, 7.59 / 16.09, 0.03) << table;
}

TEST(RenderTable, ColourIsOptIn) {
  const std::string table = render_table(small_scenario(), small_estimate(), {.color = true});
  EXPECT_NE(table.find("\x1b[32mfits\x1b[0m"), std::string::npos);
  EXPECT_NE(table.find("\x1b[1;31moom\x1b[0m"), std::string::npos);
}

TEST(RenderTable, EmptyEstimateDoesNotCrash) {
  const std::string table = render_table(Scenario{}, Estimate{});
  EXPECT_NE(table.find("(no stage)"), std::string::npos);
}

TEST(FormatBytes, Units) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(12), "12 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(512 * kMiB), "512.0 MiB");
  EXPECT_EQ(format_bytes(kGiB + kGiB / 2), "1.50 GiB");
  EXPECT_EQ(format_bytes(81559 * kMiB), "79.65 GiB");
  EXPECT_EQ(format_bytes(kGiB - 1), "1.00 GiB") << "rounds up into the next unit";
  EXPECT_EQ(format_bytes(1024 * kGiB), "1.00 TiB");
  EXPECT_EQ(format_bytes(2048 * 1024 * kGiB), "2048.0 TiB") << "TiB is the largest unit";
  EXPECT_EQ(format_bytes(-1536), "-1.50 KiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<int64_t>::min()), "-8388608.0 TiB");
}

}  // namespace
}  // namespace vramplan
