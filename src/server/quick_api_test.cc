// /api/quick and /api/quick/options through the pure API layer.
#include <gtest/gtest.h>

#include <string>

#include "server/api.h"
#include "vramplan/io/options.h"
#include "vramplan/io/quick_settings.h"
#include "vramplan/report/quick_report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

Response post(const std::string& path, const std::string& body) {
  Request request;
  request.method = "POST";
  request.path = path;
  request.body = body;
  return handle_request(request);
}

TEST(QuickApi, AnswersWhatTheCliPrints) {
  const std::string body = R"({"example": "serving", "batch": "2"})";
  const Response r = post("/api/quick", body);
  ASSERT_EQ(r.status, 200) << r.body;
  Result<QuickAnswer> answer = quick_settings(json::parse(body));
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(json::parse(r.body), quick_to_json(*answer));
  EXPECT_EQ(json::parse(r.body)["inputs"]["batch"], 2);
}

TEST(QuickApi, ErrorsAre400NamingTheField) {
  const Response r = post("/api/quick", R"({"params": "700M", "layers": 0, "hidden": 4096})");
  ASSERT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["field"], "layers");
}

TEST(QuickApi, OptionsListTheRegistryAndTheExamples) {
  Request request;
  request.method = "GET";
  request.path = "/api/quick/options";
  const Response r = handle_request(request);
  ASSERT_EQ(r.status, 200);
  const json body = json::parse(r.body);
  ASSERT_EQ(body["options"].size(), quick_options().size());
  EXPECT_EQ(body["options"][0]["key"], quick_options()[0].key);
  EXPECT_EQ(body["examples"].size(), quick_examples().size());
}

}  // namespace
}  // namespace vramplan::server
