// "emit" in POST /api/estimate, /api/infer and /api/plan, "from" with a vLLM or SGLang command on
// /api/infer, and the formats GET /api/options and /api/infer/options offer, through the pure API
// layer.
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "server/api.h"
#include "server/emit_request.h"
#include "vramplan/interop/emit.h"
#include "vramplan/interop/import.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

Response post(const std::string& path, const json& body) {
  Request request;
  request.method = "POST";
  request.path = path;
  request.body = body.dump();
  return handle_request(request);
}

Response get(const std::string& path) {
  Request request;
  request.method = "GET";
  request.path = path;
  return handle_request(request);
}

std::string field_of(const Response& r) { return json::parse(r.body).at("error").at("field"); }

TEST(EmitApi, TakeEmitRemovesItFromTheSettings) {
  json settings = {{"model", "Qwen3-8B"}, {"emit", "vllm"}};
  Result<std::optional<std::string>> emit = take_emit(settings);
  ASSERT_TRUE(emit.ok());
  EXPECT_EQ(**emit, "vllm");
  EXPECT_FALSE(settings.contains("emit"));
  json none = {{"model", "Qwen3-8B"}};
  EXPECT_FALSE(*take_emit(none));
  json bad = {{"emit", json::array()}};
  Result<std::optional<std::string>> refused = take_emit(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "emit");
}

TEST(EmitApi, InferAnswersTheCommandThatReadsBackToTheSameCapacity) {
  const json settings = {{"model", "Qwen3-8B"}, {"tp", 2}, {"gpu_memory_utilization", 0.9}};
  json with_emit = settings;
  with_emit["emit"] = "vllm";
  const Response emitted = post("/api/infer", with_emit);
  ASSERT_EQ(emitted.status, 200) << emitted.body;
  const json answer = json::parse(emitted.body);
  EXPECT_EQ(answer.at("format"), "vllm");
  const Response direct = post("/api/infer", settings);
  const Response back = post("/api/infer", {{"from", answer.at("config")}});
  ASSERT_EQ(back.status, 200) << back.body;
  EXPECT_EQ(json::parse(back.body).at("max_kv_tokens"),
            json::parse(direct.body).at("max_kv_tokens"));
  EXPECT_EQ(json::parse(back.body).at("imported").at("format"), "vllm");
}

TEST(EmitApi, EstimateAndPlanEmitTrainingFormats) {
  const Response estimate =
      post("/api/estimate", {{"model", "Llama-3.1-8B"}, {"gpus", 8}, {"emit", "megatron"}});
  ASSERT_EQ(estimate.status, 200) << estimate.body;
  EXPECT_NE(json::parse(estimate.body).at("config").get<std::string>().find("pretrain_gpt.py"),
            std::string::npos);
  const Response plan = post("/api/plan", {{"model", "Llama-3.1-8B"},
                                           {"gpus", 8},
                                           {"global_batch", 64},
                                           {"top", 2},
                                           {"emit", "megatron"}});
  ASSERT_EQ(plan.status, 200) << plan.body;
  EXPECT_EQ(json::parse(plan.body).at("format"), "megatron");
}

TEST(EmitApi, ErrorsNameEmitOrTheCommandsFlag) {
  EXPECT_EQ(post("/api/infer", {{"model", "Qwen3-8B"}, {"emit", "nope"}}).status, 400);
  EXPECT_EQ(field_of(post("/api/infer", {{"model", "Qwen3-8B"}, {"emit", "nope"}})), "emit");
  EXPECT_EQ(field_of(post("/api/estimate", {{"model", "Llama-3.1-8B"}, {"emit", "vllm"}})), "emit");
  const Response bad = post("/api/infer", {{"from", "vllm serve Qwen/Qwen3-8B -tp two"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(field_of(bad), "-tp");
}

// The names of `formats` of `kind`, in order.
template <typename Format>
json names_of(std::span<const Format> formats, ImportKind kind) {
  json names = json::array();
  for (const Format& f : formats)
    if (f.kind == kind) names.push_back(f.name);
  return names;
}

json listed_names(const json& list) {
  json names = json::array();
  for (const json& f : list) {
    EXPECT_FALSE(f.at("what").get<std::string>().empty()) << f;
    names.push_back(f.at("name"));
  }
  return names;
}

TEST(EmitApi, OptionsListTheFormatsOfTheirKindToReadAndWrite) {
  const json training = json::parse(get("/api/options").body).at("formats");
  EXPECT_EQ(listed_names(training.at("from")), names_of(import_formats(), ImportKind::kTraining));
  EXPECT_EQ(listed_names(training.at("emit")), names_of(emit_formats(), ImportKind::kTraining));
  EXPECT_TRUE(training.at("emit").dump().find("\"megatron\"") != std::string::npos);
  const json serving = json::parse(get("/api/infer/options").body).at("formats");
  EXPECT_EQ(listed_names(serving.at("from")), names_of(import_formats(), ImportKind::kServing));
  EXPECT_EQ(listed_names(serving.at("emit")), json({"vllm", "sglang"}));
}

}  // namespace
}  // namespace vramplan::server
