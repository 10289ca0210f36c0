#include "server/plan.h"

#include <gtest/gtest.h>

#include <string>

#include "vramplan/io/plan_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/plan/planner.h"
#include "vramplan/report/plan_report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

Response call(const std::string& method, const std::string& path, const std::string& body = "") {
  Request request;
  request.method = method;
  request.path = path;
  request.body = body;
  return handle_request(request);
}

json error_of(const Response& r) { return json::parse(r.body).at("error"); }

// The search's timing differs run to run; on one thread nothing else does (with more, how the
// work splits over threads moves layouts between the pruned and computed counts).
json without_timing(json plan) {
  plan["stats"].erase("seconds");
  return plan;
}

const json kSmallSearch = {
    {"model", "Llama-3.1-8B"}, {"gpus", 16}, {"gpu", "h100-80gb"}, {"seq_len", 4096},
    {"global_batch", 64},      {"top", 3},   {"threads", 1}};

TEST(ApiPlan, AnswersWhatThePlannerReturnsForTheSameSettings) {
  const Response r = call("POST", "/api/plan", kSmallSearch.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const Result<PlanResult> direct = plan_from_settings(kSmallSearch, refuse_files);
  ASSERT_TRUE(direct.ok());
  const json answer = json::parse(r.body);
  EXPECT_EQ(without_timing(answer), without_timing(plan_to_json(*direct)))
      << json::diff(without_timing(answer), without_timing(plan_to_json(*direct)));
  ASSERT_EQ(answer["candidates"].size(), 3u);
  EXPECT_GT(answer["evaluated"].get<int64_t>(), 0);
}

TEST(ApiPlan, SearchesOnABoundedNumberOfThreadsByDefault) {
  json settings = kSmallSearch;
  settings.erase("threads");
  const Response r = call("POST", "/api/plan", settings.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const int threads = json::parse(r.body)["stats"]["threads"].get<int>();
  EXPECT_GE(threads, 1);
  EXPECT_LE(threads, kMaxPlanThreads);
}

TEST(ApiPlan, CoreErrorsNameTheSetting) {
  json bad_tp = kSmallSearch;
  bad_tp["tp"] = 3;
  EXPECT_EQ(error_of(call("POST", "/api/plan", bad_tp.dump()))["field"], "tp");
  json no_batch = kSmallSearch;
  no_batch.erase("global_batch");
  const Response r = call("POST", "/api/plan", no_batch.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_of(r)["field"], "global_batch");
  json zero_gpus = kSmallSearch;
  zero_gpus["gpus"] = 0;
  EXPECT_EQ(error_of(call("POST", "/api/plan", zero_gpus.dump()))["field"], "gpus");
  json text_gpus = kSmallSearch;
  text_gpus["gpus"] = "many";
  EXPECT_EQ(error_of(call("POST", "/api/plan", text_gpus.dump()))["field"], "gpus");
  EXPECT_EQ(error_of(call("POST", "/api/plan", "[1]"))["field"], "body");
  json path_model = kSmallSearch;
  path_model["model"] = "/etc/passwd";
  EXPECT_EQ(error_of(call("POST", "/api/plan", path_model.dump()))["field"], "model");
  json offload = kSmallSearch;
  offload["offload_search"] = "always";
  EXPECT_EQ(error_of(call("POST", "/api/plan", offload.dump()))["field"], "offload_search");
  offload["offload_search"] = "auto";
  offload["host_memory_gbps"] = "fast";
  EXPECT_EQ(error_of(call("POST", "/api/plan", offload.dump()))["field"], "host_memory_gbps");
}

// Nothing fits on one 40 GB A100 for a full fine-tune of an 8B model: the answer is the offload
// pass's, as `vramplan plan` gives it.
TEST(ApiPlan, OffloadsWhenNothingFitsAndSaysSo) {
  const json body = {{"model", "Llama-3.1-8B"}, {"gpus", 1},         {"gpu", "a100-40gb"},
                     {"seq_len", 4096},         {"global_batch", 8}, {"threads", 1}};
  const Response r = call("POST", "/api/plan", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json answer = json::parse(r.body);
  EXPECT_TRUE(answer["offload_search"]["ran"]);
  ASSERT_FALSE(answer["candidates"].empty());
  EXPECT_NE(answer["candidates"][0]["offload"]["optimizer"], "none");
  EXPECT_GT(answer["candidates"][0]["peak"]["host_bytes"], 0);
  EXPECT_GT(answer["candidates"][0]["step_time"]["offload_s"], 0);
}

TEST(ApiPlan, RefusesSearchesBeyondTheServersBounds) {
  json huge = kSmallSearch;
  huge["gpus"] = kMaxPlanGpus * 2;
  const Response too_many = call("POST", "/api/plan", huge.dump());
  EXPECT_EQ(too_many.status, 400);
  EXPECT_EQ(error_of(too_many)["field"], "gpus");
  EXPECT_EQ(error_of(too_many)["value"], std::to_string(kMaxPlanGpus * 2));
  json threads = kSmallSearch;
  threads["threads"] = kMaxPlanThreads + 1;
  EXPECT_EQ(error_of(call("POST", "/api/plan", threads.dump()))["field"], "threads");
  threads["threads"] = 1;
  const Response one = call("POST", "/api/plan", threads.dump());
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(json::parse(one.body)["stats"]["threads"], 1);
}

TEST(ApiPlan, SpaceOfFittingLayoutsOnRequestWithinTheServersBound) {
  json settings = kSmallSearch;
  EXPECT_TRUE(json::parse(call("POST", "/api/plan", settings.dump()).body)["space"].is_null());
  settings["space"] = 40;
  const Response r = call("POST", "/api/plan", settings.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json space = json::parse(r.body).at("space");
  EXPECT_GT(space.at("fitting").get<int64_t>(), 0);
  EXPECT_EQ(space.at("points").size(), space.at("shown").get<size_t>());
  EXPECT_GT(space.at("pareto").size(), 0u);
  EXPECT_TRUE(space.at("base_scenario").is_object());
  settings["space"] = 1000000;
  const Response refused = call("POST", "/api/plan", settings.dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(error_of(refused)["field"], "space");
}

TEST(ApiPlan, OptionsListTheGpusAndEveryPlannerSetting) {
  const Response r = call("GET", "/api/plan/options");
  ASSERT_EQ(r.status, 200);
  const json body = json::parse(r.body);
  const json& options = body.at("options");
  ASSERT_EQ(options.size(), plan_options().size() + 1);
  EXPECT_EQ(options[0]["key"], "gpus");
  for (size_t i = 0; i < plan_options().size(); ++i) {
    EXPECT_EQ(options[i + 1]["key"], plan_options()[i].key);
    EXPECT_EQ(options[i + 1]["flag"], flag_name(plan_options()[i].key));
  }
  EXPECT_EQ(body["limits"]["max_gpus"], kMaxPlanGpus);
  EXPECT_EQ(call("GET", "/api/plan").status, 405);
}

}  // namespace
}  // namespace vramplan::server
