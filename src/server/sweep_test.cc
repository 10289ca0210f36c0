#include "server/sweep.h"

#include <gtest/gtest.h>

#include "server/api.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

Response sweep(const json& body) {
  Request request;
  request.method = "POST";
  request.path = "/api/sweep";
  request.body = body.dump();
  return handle_request(request);
}

json llama() { return {{"model", "Llama-3.1-8B"}, {"gpus", 8}}; }

std::vector<json> values_of(const json& body) {
  Result<SweepRequest> parsed = parse_sweep_request(body);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message());
  return parsed.ok() ? parsed->values : std::vector<json>{};
}

Error error_of(const json& body) {
  Result<SweepRequest> parsed = parse_sweep_request(body);
  EXPECT_FALSE(parsed.ok()) << body.dump();
  return parsed.ok() ? Error{} : parsed.error();
}

TEST(Sweep, ListedValuesGiveOnePeakEach) {
  const Response r = sweep({{"scenario", llama()}, {"vary", "seq_len"}, {"values", {1024, 4096}}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json out = json::parse(r.body);
  EXPECT_EQ(out["vary"], "seq_len");
  EXPECT_EQ(out["count"], 2);
  EXPECT_EQ(out["errors"], 0);
  ASSERT_EQ(out["points"].size(), 2u);
  EXPECT_EQ(out["points"][0]["value"], 1024);
  EXPECT_LT(out["points"][0]["peak"]["allocated_bytes"],
            out["points"][1]["peak"]["allocated_bytes"]);
  EXPECT_EQ(out["points"][0]["fit"]["gpu"], "h100-80gb");
}

TEST(Sweep, PointsEqualSingleEstimates) {
  const json out = json::parse(
      sweep({{"scenario", llama()}, {"vary", "tp"}, {"values", {2}}}).body)["points"][0];
  Request request;
  request.method = "POST";
  request.path = "/api/estimate";
  json settings = llama();
  settings["tp"] = 2;
  request.body = settings.dump();
  const json single = json::parse(handle_request(request).body);
  EXPECT_EQ(out["peak"], single["peak"]);
  EXPECT_EQ(out["fit"], single["fit"][0]);
  EXPECT_EQ(out["world_size"], single["world_size"]);
}

TEST(Sweep, AnInvalidValueGetsItsErrorAndTheRestGoOn) {
  const json no_world_size = {{"model", "Llama-3.1-8B"}};  // tp alone sets the GPU count
  const json out =
      json::parse(sweep({{"scenario", no_world_size}, {"vary", "tp"}, {"values", {1, 3, 8}}}).body);
  EXPECT_EQ(out["errors"], 1);
  EXPECT_TRUE(out["points"][0].contains("peak"));
  EXPECT_EQ(out["points"][1]["value"], 3);
  EXPECT_EQ(out["points"][1]["error"]["field"], "tp");
  EXPECT_TRUE(out["points"][2].contains("peak"));
}

TEST(Sweep, ChoicesAndModelsCanBeVaried) {
  const json out = json::parse(
      sweep(
          {{"scenario", llama()}, {"vary", "recompute"}, {"values", {"none", "selective", "full"}}})
          .body);
  ASSERT_EQ(out["errors"], 0);
  EXPECT_GT(out["points"][0]["peak"]["allocated_bytes"],
            out["points"][2]["peak"]["allocated_bytes"]);
  const json models = json::parse(
      sweep({{"scenario", json::object()}, {"vary", "model"}, {"values", {"gpt2", "Qwen3-8B"}}})
          .body);
  EXPECT_EQ(models["errors"], 0);
}

TEST(Sweep, RangesByStepIncludeBothEnds) {
  EXPECT_EQ(values_of({{"scenario", llama()},
                       {"vary", "seq_len"},
                       {"from", 1024},
                       {"to", 4096},
                       {"step", 1024}}),
            (std::vector<json>{1024, 2048, 3072, 4096}));
  // Decimal steps that do not add up exactly still reach "to".
  const std::vector<json> fractions = values_of({{"scenario", llama()},
                                                 {"vary", "allocator_overhead"},
                                                 {"from", 0},
                                                 {"to", 0.3},
                                                 {"step", 0.1}});
  EXPECT_EQ(fractions.size(), 4u);
}

TEST(Sweep, RangesByFactor) {
  EXPECT_EQ(values_of({{"scenario", llama()},
                       {"vary", "seq_len"},
                       {"from", 1024},
                       {"to", 8192},
                       {"multiply", 2}}),
            (std::vector<json>{1024, 2048, 4096, 8192}));
}

TEST(Sweep, AThousandPoints) {
  const Response r = sweep(
      {{"scenario", llama()}, {"vary", "seq_len"}, {"from", 128}, {"to", 128000}, {"step", 128}});
  ASSERT_EQ(r.status, 200);
  const json out = json::parse(r.body);
  EXPECT_EQ(out["count"], 1000);
  EXPECT_EQ(out["errors"], 0);
}

TEST(Sweep, TooManyPointsIsRefusedUpFront) {
  EXPECT_EQ(
      error_of({{"scenario", llama()}, {"vary", "seq_len"}, {"from", 1}, {"to", 1e9}, {"step", 1}})
          .field,
      "step");
  EXPECT_EQ(error_of({{"scenario", llama()},
                      {"vary", "seq_len"},
                      {"values", json(std::vector<int>(kMaxSweepPoints + 1, 1))}})
                .field,
            "values");
  EXPECT_EQ(error_of({{"scenario", llama()},
                      {"vary", "gpu_memory_gib"},
                      {"from", 1},
                      {"to", 1e15},
                      {"multiply", 1.0001}})
                .field,
            "multiply");
  const Response r =
      sweep({{"scenario", llama()}, {"vary", "seq_len"}, {"from", 1}, {"to", 20000}, {"step", 1}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("at most 10000 points"), std::string::npos) << r.body;
}

struct BadSweep {
  const char* name;
  json body;
  const char* field;
};

class SweepRejects : public testing::TestWithParam<BadSweep> {};

TEST_P(SweepRejects, NamingTheField) {
  EXPECT_EQ(error_of(GetParam().body).field, GetParam().field);
  EXPECT_EQ(sweep(GetParam().body).status, 400);
}

INSTANTIATE_TEST_SUITE_P(
    Sweep, SweepRejects,
    testing::Values(
        BadSweep{"no_scenario", {{"vary", "tp"}, {"values", {1}}}, "scenario"},
        BadSweep{
            "scenario_not_object", {{"scenario", 1}, {"vary", "tp"}, {"values", {1}}}, "scenario"},
        BadSweep{"no_vary", {{"scenario", llama()}, {"values", {1}}}, "vary"},
        BadSweep{"vary_unknown", {{"scenario", llama()}, {"vary", "tpp"}, {"values", {1}}}, "vary"},
        BadSweep{"vary_object",
                 {{"scenario", llama()}, {"vary", "model_config"}, {"values", {1}}},
                 "vary"},
        BadSweep{"vary_not_text", {{"scenario", llama()}, {"vary", 3}, {"values", {1}}}, "vary"},
        BadSweep{"unknown_field",
                 {{"scenario", llama()}, {"vary", "tp"}, {"values", {1}}, {"stepp", 1}},
                 "stepp"},
        BadSweep{"values_empty",
                 {{"scenario", llama()}, {"vary", "tp"}, {"values", json::array()}},
                 "values"},
        BadSweep{
            "values_not_array", {{"scenario", llama()}, {"vary", "tp"}, {"values", 1}}, "values"},
        BadSweep{"value_object",
                 {{"scenario", llama()}, {"vary", "tp"}, {"values", {1, {{"a", 1}}}}},
                 "values[1]"},
        BadSweep{"values_and_range",
                 {{"scenario", llama()}, {"vary", "tp"}, {"values", {1}}, {"from", 1}},
                 "values"},
        BadSweep{"no_range", {{"scenario", llama()}, {"vary", "tp"}}, "from"},
        BadSweep{"no_to", {{"scenario", llama()}, {"vary", "tp"}, {"from", 1}, {"step", 1}}, "to"},
        BadSweep{"to_below_from",
                 {{"scenario", llama()}, {"vary", "tp"}, {"from", 4}, {"to", 1}, {"step", 1}},
                 "to"},
        BadSweep{
            "no_stride", {{"scenario", llama()}, {"vary", "tp"}, {"from", 1}, {"to", 4}}, "step"},
        BadSweep{"both_strides",
                 {{"scenario", llama()},
                  {"vary", "tp"},
                  {"from", 1},
                  {"to", 4},
                  {"step", 1},
                  {"multiply", 2}},
                 "multiply"},
        BadSweep{"zero_step",
                 {{"scenario", llama()}, {"vary", "tp"}, {"from", 1}, {"to", 4}, {"step", 0}},
                 "step"},
        BadSweep{"fractional_step_for_integer",
                 {{"scenario", llama()}, {"vary", "tp"}, {"from", 1}, {"to", 4}, {"step", 0.5}},
                 "step"},
        BadSweep{"factor_one",
                 {{"scenario", llama()}, {"vary", "tp"}, {"from", 1}, {"to", 4}, {"multiply", 1}},
                 "multiply"},
        BadSweep{"factor_from_zero",
                 {{"scenario", llama()}, {"vary", "tp"}, {"from", 0}, {"to", 4}, {"multiply", 2}},
                 "from"},
        BadSweep{
            "range_of_choice",
            {{"scenario", llama()}, {"vary", "recompute"}, {"from", 1}, {"to", 4}, {"step", 1}},
            "from"},
        BadSweep{"from_not_number",
                 {{"scenario", llama()}, {"vary", "tp"}, {"from", "1"}, {"to", 4}, {"step", 1}},
                 "from"}),
    [](const testing::TestParamInfo<BadSweep>& info) { return info.param.name; });

TEST(Sweep, AnEmptyUnknownKeyIsStillNamed) {
  // Found by fuzzing: {"": 512} named no field.
  const Error e = error_of({{"scenario", llama()}, {"vary", "seq_len"}, {"", 512}});
  EXPECT_EQ(e.field, "\"\"");
  EXPECT_EQ(e.reason, "unknown field");
}

}  // namespace
}  // namespace vramplan::server
