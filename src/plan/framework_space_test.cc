// The planner under --framework: it searches only what the framework runs, refuses fixed
// settings the framework lacks, and estimate() warns about layouts outside it.
#include "plan/framework_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "plan/planner_search.h"
#include "training/framework_layouts.h"
#include "vramplan/io/plan_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/report/plan_report.h"
#include "vramplan/report/report.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/pipeline_split.h"

namespace vramplan {
namespace {

using nlohmann::json;

const FileReader kNoFiles;

json llama8b(const char* framework, int64_t gpus) {
  return {{"model", "Llama-3.1-8B"}, {"gpus", gpus}, {"seq_len", 4096},
          {"global_batch", 64},      {"top", 1000},  {"framework", framework}};
}

PlanResult planned(const json& settings) {
  Result<PlanResult> p = plan_from_settings(settings, kNoFiles);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message());
  return p.ok() ? *p : PlanResult{};
}

// Every candidate's scenario, estimated again, has the candidate's peak.
void expect_candidates_reestimate(const PlanResult& p) {
  const json out = plan_to_json(p);
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    Result<ResolvedScenario> again = resolve_scenario(out["candidates"][i]["scenario"], kNoFiles);
    ASSERT_TRUE(again.ok()) << again.error().message();
    Result<Estimate> est = estimate(again->scenario, {.explain = false});
    ASSERT_TRUE(est.ok()) << est.error().message();
    EXPECT_EQ(est->peak.device_bytes, p.candidates[i].device_bytes)
        << layout_name(p.candidates[i].layout);
  }
}

std::string field_of(const json& settings) {
  Result<PlanResult> p = plan_from_settings(settings, kNoFiles);
  return p.ok() ? "" : p.error().field;
}

TEST(FrameworkLayouts, NanotronPlansOnlyWhatNanotronRuns) {
  const PlanResult p = planned(llama8b("nanotron", 16));
  ASSERT_GT(p.candidates.size(), 20u);
  bool pipelined = false;
  for (const PlanCandidate& c : p.candidates) {
    const PlanLayout& l = c.layout;
    EXPECT_LE(l.sharding.zero, 1) << layout_name(l);
    EXPECT_EQ(l.sharding.fsdp, FsdpMode::kNone);
    EXPECT_FALSE(l.sharding.distributed_optimizer);
    EXPECT_EQ(l.vpp, 1);
    if (l.pp > 1) {
      pipelined = true;
      EXPECT_EQ(l.split.kind, SplitKind::kCompute) << layout_name(l);
    }
  }
  EXPECT_TRUE(pipelined);
  expect_candidates_reestimate(p);
}

TEST(FrameworkLayouts, NanotronsSplitIsTheOneItsEstimateUses) {
  json settings = llama8b("nanotron", 16);
  settings["pp"] = 4;
  settings["top"] = 3;
  const PlanResult p = planned(settings);
  ASSERT_FALSE(p.candidates.empty());
  const json scenario = plan_to_json(p)["candidates"][0]["scenario"];
  EXPECT_EQ(scenario["pipeline_split"], "compute");
  expect_candidates_reestimate(p);
}

TEST(FrameworkLayouts, TorchtitanPlansFsdpOrDdpAndItsOwnSplit) {
  json settings = llama8b("torchtitan", 16);
  settings["pp"] = 4;
  const PlanResult p = planned(settings);
  ASSERT_FALSE(p.candidates.empty());
  bool own_split = false;
  for (const PlanCandidate& c : p.candidates) {
    const ShardingChoice& sh = c.layout.sharding;
    EXPECT_EQ(sh.zero, 0) << layout_name(c.layout);
    EXPECT_FALSE(sh.distributed_optimizer);
    own_split |= c.layout.split.kind == SplitKind::kBalancedEmbeddingAndLoss;
  }
  EXPECT_TRUE(own_split);  // 34 units over 4 stages: 8, 9, 8, 7 — no other kind's sizes
  expect_candidates_reestimate(p);
}

TEST(FrameworkLayouts, DeepspeedKeepsZeroTwoAndThreeOutOfItsPipeline) {
  const PlanResult p = planned(llama8b("deepspeed", 16));
  bool zero3 = false, pipelined = false;
  for (const PlanCandidate& c : p.candidates) {
    const PlanLayout& l = c.layout;
    if (l.pp > 1) {
      pipelined = true;
      EXPECT_LE(l.sharding.zero, 1) << layout_name(l);
      EXPECT_EQ(l.vpp, 1);
      EXPECT_EQ(l.schedule, Schedule::k1F1B);
    }
    zero3 |= l.sharding.zero == 3;
    EXPECT_EQ(l.sharding.fsdp, FsdpMode::kNone);
    EXPECT_FALSE(l.sharding.distributed_optimizer);
  }
  EXPECT_TRUE(zero3);
  EXPECT_TRUE(pipelined);
  json both = llama8b("deepspeed", 16);
  both["pp"] = 2;
  both["zero"] = 2;
  EXPECT_EQ(field_of(both), "zero");
  both.erase("pp");
  EXPECT_EQ(field_of(both), "");  // ZeRO-2 without a pipeline
}

TEST(FrameworkLayouts, HfTrainerHasNoPipelineAndMegatronNoGpipe) {
  for (const PlanCandidate& c : planned(llama8b("hf-trainer", 16)).candidates)
    EXPECT_EQ(c.layout.pp, 1) << layout_name(c.layout);
  bool interleaved = false;
  for (const PlanCandidate& c : planned(llama8b("megatron", 16)).candidates) {
    EXPECT_NE(c.layout.schedule, Schedule::kGPipe) << layout_name(c.layout);
    interleaved |= c.layout.schedule == Schedule::kInterleaved;
  }
  EXPECT_TRUE(interleaved);
}

// Megatron shards by its distributed optimizer or Megatron-FSDP (ZeRO-1, ZeRO-2, full shard,
// HSDP): never FSDP SHARD_GRAD_OP or DeepSpeed's ZeRO-3.
TEST(FrameworkLayouts, MegatronPlansOnlyItsShardings) {
  json settings = llama8b("megatron", 16);
  settings["top"] = 200;
  const PlanResult p = planned(settings);
  ASSERT_FALSE(p.candidates.empty());
  bool sharded = false;
  auto check = [&](const PlanLayout& l) {
    EXPECT_NE(l.sharding.fsdp, FsdpMode::kShardGradOp) << layout_name(l);
    EXPECT_NE(l.sharding.zero, 3) << layout_name(l);
    sharded |= l.sharding.fsdp == FsdpMode::kFullShard || l.sharding.distributed_optimizer;
  };
  for (const PlanCandidate& c : p.candidates) {
    check(c.layout);
    for (const PlanLayout& l : c.equivalents) check(l);
  }
  EXPECT_TRUE(sharded);
  settings["fsdp"] = "shard_grad_op";
  Result<PlanRequest> r = plan_request_from_settings(settings, kNoFiles);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "fsdp");
}

TEST(FrameworkLayouts, WithoutAFrameworkEverythingIsSearched) {
  json settings = llama8b("megatron", 16);
  settings.erase("framework");
  Result<PlanRequest> r = plan_request_from_settings(settings, kNoFiles);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->space.zero.empty());
  EXPECT_TRUE(r->space.schedule.empty());
  EXPECT_TRUE(r->space.split.empty());
  EXPECT_FALSE(r->space.pipeline_max_zero.has_value());
}

TEST(FrameworkLayouts, AFixedSettingTheFrameworkLacksIsRefusedByName) {
  const std::vector<std::tuple<const char*, const char*, json>> cases = {
      {"nanotron", "zero", 2},
      {"nanotron", "fsdp", "full_shard"},
      {"nanotron", "vpp", 2},
      {"nanotron", "pipeline_split", "even"},
      {"nanotron", "first_stage_layers", 6},
      {"torchtitan", "zero", 1},
      {"torchtitan", "distributed_optimizer", true},
      {"deepspeed", "fsdp", "full_shard"},
      {"deepspeed", "schedule", "gpipe"},
      {"hf-trainer", "pp", 2},
      {"megatron", "schedule", "gpipe"}};
  for (const auto& [framework, key, value] : cases) {
    json settings = llama8b(framework, 16);
    settings[key] = value;
    Result<PlanResult> p = plan_from_settings(settings, kNoFiles);
    ASSERT_FALSE(p.ok()) << framework << " " << key;
    EXPECT_EQ(p.error().field, key) << framework;
    EXPECT_NE(p.error().accepted.find(std::string("under --framework ") + framework),
              std::string::npos)
        << p.error().accepted;
  }
  // A refused split names the flag and the value as given, and the splits in flag terms.
  json split = llama8b("nanotron", 16);
  split["first_stage_layers"] = 6;
  Result<PlanResult> refused = plan_from_settings(split, kNoFiles);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().value, "6");
  EXPECT_EQ(refused.error().accepted, "pipeline_split compute under --framework nanotron");
  json ok = llama8b("nanotron", 16);
  ok["zero"] = 1;
  ok["schedule"] = "gpipe";
  EXPECT_EQ(field_of(ok), "");
}

Scenario resolved(const json& settings) {
  Result<ResolvedScenario> r = resolve_scenario(settings, kNoFiles);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r->scenario : Scenario{};
}

TEST(FrameworkLayouts, AnEstimateOutsideTheFrameworkSaysSo) {
  // DeepSpeed's default ZeRO-2 with pipeline stages: estimated as given, with a warning.
  json settings = {{"model", "Llama-3.1-8B"}, {"gpus", 16}, {"pp", 2}, {"framework", "deepspeed"}};
  Scenario s = resolved(settings);
  EXPECT_EQ(layout_outside_framework(s),
            std::vector<std::string>{"zero = 2 with pp = 2 (it runs ZeRO 0 to 1 with a pipeline)"});
  Result<Estimate> e = estimate(s);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(std::any_of(e->warnings.begin(), e->warnings.end(), [](const std::string& w) {
    return w.find("deepspeed does not run this layout") != std::string::npos;
  }));
  settings["zero"] = 1;
  EXPECT_TRUE(layout_outside_framework(resolved(settings)).empty());
  settings = {{"model", "Llama-3.1-8B"},
              {"gpus", 16},
              {"pp", 2},
              {"vpp", 2},
              {"zero", 2},
              {"framework", "nanotron"},
              {"pipeline_split", "even"}};
  EXPECT_EQ(layout_outside_framework(resolved(settings)),
            (std::vector<std::string>{"zero = 2 (it runs 0, 1)", "vpp = 2 (it runs 1)",
                                      "schedule = interleaved (it runs 1f1b, gpipe)",
                                      "pipeline_split = even (it runs compute)"}));
  settings.erase("framework");
  EXPECT_TRUE(layout_outside_framework(resolved(settings)).empty());
  // A split that is no planner kind is still named when the framework runs one split only.
  settings = {{"model", "Llama-3.1-8B"},
              {"gpus", 16},
              {"pp", 4},
              {"framework", "nanotron"},
              {"pipeline_split", "balanced"},
              {"embedding_stage", true}};
  EXPECT_EQ(layout_outside_framework(resolved(settings)),
            std::vector<std::string>{
                "a balanced split with only one of embedding_stage/loss_stage (it runs compute)"});
  // Each framework's own defaults are layouts it runs.
  for (const char* f : {"megatron", "torchtitan", "deepspeed", "nanotron", "hf-trainer"}) {
    EXPECT_TRUE(
        layout_outside_framework(resolved({{"model", "Llama-3.1-8B"}, {"framework", f}})).empty())
        << f;
  }
}

TEST(FrameworkLayouts, NothingFitsAdviceNamesOnlyTheUsersFlags) {
  // The framework's lists are not the user's fixed flags: no advice to leave them out, but a
  // word on what the framework excluded.
  json settings = llama8b("torchtitan", 8);
  settings["model"] = "Llama-3.1-405B";
  settings["top"] = 5;
  const PlanResult p = planned(settings);
  ASSERT_TRUE(p.closest_miss.has_value());
  auto advises = [&](const PlanResult& r, const std::string& text) {
    return std::any_of(r.suggestions.begin(), r.suggestions.end(),
                       [&](const std::string& s) { return s.find(text) != std::string::npos; });
  };
  EXPECT_FALSE(advises(p, "leave out the fixed layout flags"));
  EXPECT_TRUE(advises(p, "without --framework torchtitan"));
  settings["tp"] = 8;
  EXPECT_TRUE(advises(planned(settings), "leave out the fixed layout flags"));
}

TEST(FrameworkLayouts, CandidatesWithoutAPipelineKeepTheFrameworksSplit) {
  json settings = llama8b("torchtitan", 8);
  settings["pp"] = 1;
  settings["top"] = 1;
  const PlanResult p = planned(settings);
  ASSERT_FALSE(p.candidates.empty());
  const json scenario = plan_to_json(p)["candidates"][0]["scenario"];
  EXPECT_FALSE(scenario.contains("pipeline_split"));
  json deeper = scenario;
  deeper["pp"] = 4;
  deeper["dp"] = 2;
  const Scenario s = resolved(deeper);
  EXPECT_TRUE(s.parallel.balanced_split && s.parallel.embedding_as_stage);
  Result<Estimate> e = estimate(s);
  ASSERT_TRUE(e.ok()) << e.error().message();
  const json out = estimate_to_json(s, *e);
  EXPECT_EQ(out["scenario"]["parallel"]["pipeline_split"], "balanced");
}

TEST(FrameworkLayouts, EveryFrameworkNamesItsSource) {
  for (Framework f : {Framework::kMegatron, Framework::kTorchtitan, Framework::kDeepspeed,
                      Framework::kNanotron, Framework::kHfTrainer})
    EXPECT_GT(std::string(framework_layouts(f).source).size(), 20u) << framework_name(f);
}

}  // namespace
}  // namespace vramplan
