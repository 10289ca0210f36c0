// POST /api/roofline through the pure API layer: the answer is the settings pipeline's JSON (the
// one `vramplan roofline --format json` prints), bad input a 400 naming the key as written.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "server/api.h"
#include "vramplan/io/roofline_settings.h"
#include "vramplan/report/roofline_report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

Response call(const std::string& method, const std::string& body,
              const std::map<std::string, std::string>& query = {}) {
  Request request;
  request.method = method;
  request.path = "/api/roofline";
  request.body = body;
  request.query = query;
  return handle_request(request);
}

TEST(RooflineApi, AnswersTheSettingsPipelinesJson) {
  const json settings = {{"model", "Llama-3.1-8B"}, {"gpus", 8},          {"tp", "2"},
                         {"global_batch", 64},      {"gpus_per_node", 4}, {"inter_node_gbps", 25}};
  const Response r = call("POST", settings.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  Result<SettingsRoofline> direct = roofline_settings(settings, nullptr);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(json::parse(r.body), settings_roofline_to_json(*direct));
  EXPECT_EQ(json::parse(r.body).at("cluster").at("gpus_per_node"), 4);
  const Response pretty = call("POST", settings.dump(), {{"pretty", "1"}});
  EXPECT_EQ(pretty.body, settings_roofline_to_json(*direct).dump(2) + "\n");
}

TEST(RooflineApi, BadInputIsA400NamingTheKey) {
  for (const auto& [body, field] : std::map<std::string, std::string>{
           {R"({"model": "Llama-3.1-8B", "gpus_per_node": 0})", "gpus_per_node"},
           {R"({"model": "Llama-3.1-8B", "inter_node_gbps": "fast"})", "inter_node_gbps"},
           {R"({"model": "Llama-3.1-8B", "host_link_gbps": 0})", "host_link_gbps"},
           {R"({"model": "Llama-3.1-8B", "nvme_gbps": -1})", "nvme_gbps"},
           {R"({"model": "Llama-3.1-8B", "gpu_memory_gib": 80})", "gpu_memory_gib"},
           {R"({"model": "./config.json"})", "model"},
           {R"({"model": )", "body"}}) {
    const Response r = call("POST", body);
    EXPECT_EQ(r.status, 400) << body;
    const json e = json::parse(r.body).at("error");
    EXPECT_EQ(e.at("field"), field) << body;
    EXPECT_FALSE(e.at("accepted").get<std::string>().empty()) << body;
  }
}

TEST(RooflineApi, OnlyPost) {
  const Response r = call("GET", "");
  EXPECT_EQ(r.status, 405);
}

}  // namespace
}  // namespace vramplan::server
