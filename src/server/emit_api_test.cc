// "emit" in POST /api/estimate, /api/infer and /api/plan, and "from" with a vLLM or SGLang
// command on /api/infer, through the pure API layer.
#include <gtest/gtest.h>

#include <string>

#include "server/api.h"
#include "server/emit_request.h"

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

}  // namespace
}  // namespace vramplan::server
