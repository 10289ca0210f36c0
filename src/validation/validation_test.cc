#include "vramplan/validation/validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "validation/dataset_rows.h"

namespace vramplan {
namespace {

const ValidationReport& report() {
  static const ValidationReport r = [] {
    Result<ValidationReport> result = validate_measurements();
    EXPECT_TRUE(result.ok());
    return result.ok() ? result.value() : ValidationReport{};
  }();
  return r;
}

TEST(Validation, EveryMeasuredRowIsComparedOrVisiblySkipped) {
  // 116 Megatron rows × 2 quantities + 1,758 Ultra-Scale runs + 1,529 crashed runs.
  // ... + 18 published torchtitan runs + 585 PyTorch reference rows × 7 quantities (peak, two
  // phases, four categories) + 322 rows measured on a GPU × 4 quantities (peak, two phases,
  // peak reserved).
  EXPECT_EQ(report().rows.size(), 116u * 2 + 1758 + 1529 + 18 + 585 * 7 + 322 * 4);
  for (const ValidationRow& row : report().rows) {
    if (row.skipped) {
      EXPECT_FALSE(row.reason.empty()) << row.id;
      continue;
    }
    EXPECT_TRUE(std::isfinite(row.predicted_gib)) << row.id;
    // A category at the peak (measured against the peak, basis_gib) may be 0: no gradients yet.
    if (row.basis_gib > 0) {
      EXPECT_GE(row.predicted_gib, 0) << row.id;
    } else {
      EXPECT_GT(row.predicted_gib, 0) << row.id;
    }
  }
}

TEST(Validation, TheReliableSevenBillionRowsAreCompared) {
  int found = 0;
  for (const ValidationRow& row : report().rows) {
    if (row.id.rfind("gpt3_7b_", 0) != 0) continue;
    EXPECT_FALSE(row.skipped) << row.id << ": " << row.reason;
    ++found;
  }
  EXPECT_EQ(found, 4);  // two tests × (static, peak)
}

TEST(Validation, ArgumentsTheTableLacksAreAppliedOrSkipped) {
  // data/measurements/megatron_test_args.csv: the DeepSeek-style test's MLA ranks (q 1536,
  // kv 512) and fused cross-entropy are applied; TP-overlap userbuffers and partial CUDA graphs
  // are named as skip reasons.
  int seen = 0;
  for (const ValidationRow& row : report().rows) {
    if (row.id == "gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed") {
      ASSERT_FALSE(row.skipped) << row.reason;
      EXPECT_LT(std::abs(row.error_pct()), row.quantity == "peak allocated" ? 3 : 8)
          << row.quantity;
      ++seen;
    }
    if (row.id.find("native_fp8_tp_pp_sp_tp_overlap") != std::string::npos) {
      EXPECT_TRUE(row.skipped);
      EXPECT_NE(row.reason.find("--tp-comm-overlap"), std::string::npos);
      ++seen;
    }
    if (row.id.find("native_fp8_tp_sp_cp") != std::string::npos) {  // fp8 weights, compared
      ASSERT_FALSE(row.skipped) << row.reason;
      EXPECT_LT(std::abs(row.error_pct()), 3) << row.quantity;
      ++seen;
    }
    if (row.id.rfind("gpt3_", 0) == 0 && row.id.find("cudagraph") != std::string::npos) {
      EXPECT_TRUE(row.skipped);
      EXPECT_NE(row.reason.find("CUDA graphs of parts"), std::string::npos);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 5 * 2);  // five tests (two with CUDA graphs), static and peak each
}

TEST(Validation, GroupedGemmTestsCountTheirWorkspaces) {
  // The h = 512 MoE tests with --moe-grouped-gemm (megatron_test_args.csv) keep Transformer
  // Engine's four 32 MiB grouped-GEMM workspaces; without them their static memory was 0.13 GiB
  // or more under the measurement, with them it is within 0.07 GiB, as close as the MoE tests
  // without grouped GEMM.
  int seen = 0;
  for (const ValidationRow& row : report().rows) {
    if (row.quantity != "static allocated" || row.skipped) continue;
    const bool grouped = row.id.find("groupedGEMM") != std::string::npos ||
                         row.id == "gpt3_moe_mcore_te_ep8_resume_torch_dist_dist_optimizer" ||
                         row.id == "gpt3_mcore_te_tp2_pp1_te_8experts_etp1_ep4";
    if (!grouped) continue;
    EXPECT_LT(std::abs(row.measured_gib - row.predicted_gib), 0.07) << row.id;
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

TEST(Validation, LocalAttentionAndFp16TestsCountMegatronsOwnBuffers) {
  // The dense --transformer-impl local tests keep the attention scores' global buffer
  // (64 MiB at tp 1, 16 MiB at tp 4); the --fp16 ones accumulate fp16 gradients and keep the
  // optimizer's fp32 copy after the step. Without these they were 0.03-0.07 GiB off, with them
  // within 0.012 GiB.
  int seen = 0;
  for (const ValidationRow& row : report().rows) {
    if (row.quantity != "static allocated" || row.skipped) continue;
    if (row.id != "gpt3_mcore_tp1_pp2" && row.id != "gpt3_mcore_tp1_pp4" &&
        row.id.rfind("gpt3_mcore_tp4_pp1_resume_torch", 0) != 0 &&
        row.id.rfind("gpt3_mcore_tp1_pp1_resume_torch_dist_dist_optimizer", 0) != 0)
      continue;
    EXPECT_LT(std::abs(row.measured_gib - row.predicted_gib), 0.012) << row.id;
    ++seen;
  }
  EXPECT_EQ(seen, 5);
}

TEST(Validation, FeaturesNamedOnlyInTheTestNameAreModelledOrSkipped) {
  // The fused cross-entropy keeps one more fp32 logits tensor: with it the tp2/pp2 test is
  // predicted as close as the same test without the fusion.
  double fused_error = 100, plain_error = 100;
  for (const ValidationRow& row : report().rows) {
    if (row.quantity != "peak allocated") continue;
    if (row.id == "gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion")
      fused_error = std::abs(row.error_pct());
    if (row.id == "gpt3_mcore_te_tp2_pp2_resume_torch_dist")
      plain_error = std::abs(row.error_pct());
    if (row.id.find("muon") != std::string::npos ||
        row.id.find("defer_embedding_wgrad") != std::string::npos ||
        row.id.find("multi_dist_optimizer_instances") != std::string::npos) {
      EXPECT_TRUE(row.skipped) << row.id;
      EXPECT_NE(row.reason.find("not modelled yet"), std::string::npos) << row.id;
    }
  }
  EXPECT_LT(fused_error, 3);
  EXPECT_LT(plain_error, 3);
}

TEST(Validation, PublishedTorchtitanRunsArePredictedWithItsConventions) {
  // torchtitan's Dec 2024 page: FSDP (8 and 128 GPUs), FSDP + CP, FSDP + TP on the 70B and the
  // 405B's FSDP + TP + PP (+ CP) runs are predicted; torch.compile under selective
  // checkpointing is skipped, saying why.
  int compared = 0, compared_pipeline = 0, skipped_compile = 0;
  for (const ValidationRow& row : report().rows) {
    if (row.dataset != "torchtitan") continue;
    if (row.skipped) {
      skipped_compile += row.reason.find("torch.compile") != std::string::npos;
      continue;
    }
    EXPECT_LT(std::abs(row.error_pct()), 10) << row.id;
    ++compared;
    compared_pipeline +=
        row.id.find("_pp8_") != std::string::npos || row.id.find("table6_") != std::string::npos;
  }
  EXPECT_EQ(compared, 14);
  EXPECT_EQ(compared_pipeline, 6);
  EXPECT_EQ(skipped_compile, 4);
}

TEST(Validation, TheUltraScaleNoiseFloorComesFromRunsThatMustAgree) {
  const NoiseFloor& n = report().ultrascale_noise;
  EXPECT_EQ(n.groups, 106);
  EXPECT_EQ(n.rows, 401);
  EXPECT_NEAR(n.median_abs_pct, 1.1, 0.1);
  EXPECT_NEAR(n.p90_abs_pct, 10.2, 0.1);  // the p90 target sits at the data's own floor
}

// The gate CI holds (validate --check): every target is met, or open and no worse than the
// figure committed for it. The targets are the issues' (docs/accuracy.md); they are written out
// here a second time so that moving one to pass shows up as a failing test, not a quiet edit.
TEST(Validation, TheAccuracyGateHoldsEveryTarget) {
  const std::pair<const char*, double> goals[] = {
      {"Megatron static memory, median |error| %", 3.0},
      {"Megatron peak allocated, median |error| %", 5.0},
      {"Megatron peak allocated, p90 |error| %", 10.0},
      {"torchtitan published peak reserved, median |error| %", 5.0},
      {"torchtitan published peak reserved, p90 |error| %", 10.0},
      {"Ultra-Scale reported memory (pp > 1 or tp <= 4), median |error| %", 5.0},
      {"Ultra-Scale reported memory (pp > 1 or tp <= 4), p90 |error| %", 15.3},  // 1.5 × floor
      {"Ultra-Scale runs that ran predicted to fit, %", 97.0},
      {"Ultra-Scale crashed runs flagged tight or oom, %", 80.0},
      {"PyTorch reference peak allocated, median |error| %", 1.0},
      {"PyTorch reference peak allocated, p90 |error| %", 3.0},
      {"PyTorch reference parameters at peak, p90 |error| % of peak", 2.0},
      {"PyTorch reference gradients at peak, p90 |error| % of peak", 2.0},
      {"PyTorch reference optimizer states at peak, p90 |error| % of peak", 2.0},
      {"PyTorch reference activations + temporaries at peak, p90 |error| % of peak", 2.0},
      {"GPU-measured peak allocated, median |error| %", 1.0},
      {"GPU-measured peak allocated, p90 |error| %", 3.0}};
  ASSERT_EQ(report().targets.size(), std::size(goals));
  for (const auto& [name, goal] : goals) {
    bool seen = false;
    for (const AccuracyTarget& t : report().targets) {
      if (t.name != name) continue;
      seen = true;
      EXPECT_DOUBLE_EQ(t.target, goal) << name;
      EXPECT_TRUE(t.passes()) << name << ": " << t.value << " against the target " << t.target
                              << (t.open() ? " and the committed " + std::to_string(t.committed)
                                           : std::string(" (not open: it must be met)"));
    }
    EXPECT_TRUE(seen) << name;
  }
}

// The GPU rows are the allocator's own figures: every allocated row of vramplan is compared,
// GEMM workspaces included (the fake-tensor reference leaves them out), so a plain bf16 AdamW row
// of a dense model lands within 1% of what torch.cuda.max_memory_allocated read.
TEST(Validation, GpuMeasuredRowsCompareTheAllocatorsPeak) {
  int compared = 0;
  for (const ValidationRow& r : report().rows) {
    if (r.dataset != "gpu-measured") continue;
    EXPECT_EQ(r.facets.at("gpu"), "h200-141gb") << r.id;
    if (r.skipped) {
      EXPECT_NE(r.reason.find("out of target"), std::string::npos) << r.id;
      continue;
    }
    ++compared;
    if (r.quantity == "peak allocated" &&
        r.id == "Llama-3.1-8B/L2/s4096/b1x1/single/w1r0/none/bf16/adamw-fused/full") {
      EXPECT_LT(std::fabs(r.error_pct()), 1.0) << r.predicted_gib << " vs " << r.measured_gib;
    }
  }
  EXPECT_GE(compared, 300 * 4);
}

// An open target's committed figure names a real target that is still not met: once it is
// met the figure goes, so the gate holds the target itself from then on.
TEST(Validation, OnlyUnmetTargetsAreOpen) {
  std::set<std::string> names;
  for (const AccuracyTarget& t : report().targets) {
    names.insert(t.name);
    if (t.open()) {
      EXPECT_FALSE(t.met()) << t.name << " is met: delete its committed figure";
    }
  }
  for (const std::string& name : dataset_rows::committed_target_names())
    EXPECT_TRUE(names.count(name)) << name << " is not a target";
}

}  // namespace
}  // namespace vramplan
