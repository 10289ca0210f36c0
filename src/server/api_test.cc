#include "server/api.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "vramplan/io/estimate_request.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/model/presets.h"
#include "vramplan/report/catalog_json.h"
#include "vramplan/report/settings_report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

Response call(const std::string& method, const std::string& path, const std::string& body = "",
              const std::map<std::string, std::string>& query = {}) {
  Request request;
  request.method = method;
  request.path = path;
  request.body = body;
  request.query = query;
  return handle_request(request);
}

Response get(const std::string& path) { return call("GET", path); }
Response post(const std::string& path, const std::string& body) { return call("POST", path, body); }

json body_of(const Response& r) { return json::parse(r.body); }

// The {"error": {...}} of a response, checking that it has every documented field.
json error_of(const Response& r) {
  const json e = body_of(r).at("error");
  for (const char* key : {"field", "value", "accepted", "reason", "message"})
    EXPECT_TRUE(e.contains(key)) << key << " missing in " << r.body;
  return e;
}

TEST(Api, HealthSaysOk) {
  const Response r = get("/api/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(body_of(r)["status"], "ok");
}

TEST(Api, OptionsListEveryScenarioSettingWithItsKind) {
  const json options = body_of(get("/api/options")).at("options");
  ASSERT_EQ(options.size(), scenario_options().size());
  std::set<std::string> kinds;
  for (size_t i = 0; i < options.size(); ++i) {
    const OptionSpec& spec = scenario_options()[i];
    EXPECT_EQ(options[i]["key"], spec.key);
    EXPECT_EQ(options[i]["flag"], flag_name(spec.key));
    EXPECT_EQ(options[i]["group"], spec.group);
    kinds.insert(options[i]["kind"].get<std::string>());
    if (spec.kind == OptionKind::kChoice) {
      EXPECT_FALSE(options[i]["choices"].empty()) << spec.key;
    }
  }
  EXPECT_EQ(kinds,
            (std::set<std::string>{"integer", "number", "bool", "text", "choice", "object"}));
  for (const json& o : options) {
    if (o["key"] == "recompute") {
      EXPECT_EQ(o["choices"], json({"none", "selective", "full", "selective-op"}));
    }
  }
}

TEST(Api, ModelsAndGpusAreWhatTheCliPrints) {
  const json models = body_of(get("/api/models"));
  EXPECT_EQ(models, presets_json());
  EXPECT_EQ(models.size(), presets().size());
  EXPECT_EQ(body_of(get("/api/gpus")), gpus_json());
}

TEST(Api, ModelConfigByNameOrHubId) {
  const Response by_name = get("/api/models/Llama-3.1-8B");
  ASSERT_EQ(by_name.status, 200);
  EXPECT_EQ(body_of(by_name), json::parse(find_preset("Llama-3.1-8B")->config));
  EXPECT_EQ(body_of(by_name)["hidden_size"], 4096);
  const Response by_hub_id = get("/api/models/meta-llama/Llama-3.1-8B");
  ASSERT_EQ(by_hub_id.status, 200);
  EXPECT_EQ(by_hub_id.body, by_name.body);
}

TEST(Api, UnknownModelIs404NamingIt) {
  const Response r = get("/api/models/No-Such-Model");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_of(r)["field"], "name");
  EXPECT_EQ(error_of(r)["value"], "No-Such-Model");
}

TEST(Api, EstimateIsTheCliJson) {
  const json settings = {{"model", "Llama-3.1-8B"}, {"tp", 2}, {"seq_len", 8192}};
  const Response r = post("/api/estimate", settings.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  Result<SettingsEstimate> expected = estimate_settings(settings, nullptr);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(body_of(r), settings_estimate_to_json(*expected));
  EXPECT_EQ(body_of(r)["scenario"]["parallel"]["tp"], 2);
  // ?pretty gives the bytes `vramplan estimate --format json` prints.
  const Response pretty = call("POST", "/api/estimate", settings.dump(), {{"pretty", "1"}});
  EXPECT_EQ(pretty.body, settings_estimate_to_json(*expected).dump(2) + "\n");
}

TEST(Api, EstimateTakesTextValuesAndInlineConfigs) {
  const Response text = post("/api/estimate", R"({"model": "Qwen3-8B", "tp": "2"})");
  EXPECT_EQ(text.status, 200) << text.body;
  const std::string config(find_preset("Qwen3-8B")->config);
  const Response inline_config =
      post("/api/estimate", R"({"model_config": )" + config + R"(, "tp": 2})");
  ASSERT_EQ(inline_config.status, 200) << inline_config.body;
  EXPECT_EQ(body_of(inline_config)["peak"], body_of(text)["peak"]);
}

struct BadRequest {
  const char* name;
  const char* body;
  const char* field;  // the field the error must name
};

class EstimateRejects : public testing::TestWithParam<BadRequest> {};

TEST_P(EstimateRejects, With400NamingTheField) {
  const Response r = post("/api/estimate", GetParam().body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r)["field"], GetParam().field) << r.body;
  EXPECT_FALSE(error_of(r)["message"].get<std::string>().empty());
}

INSTANTIATE_TEST_SUITE_P(
    Api, EstimateRejects,
    testing::Values(BadRequest{"empty", "", "body"}, BadRequest{"blank", " \n", "body"},
                    BadRequest{"not_json", "{model: 1}", "body"},
                    BadRequest{"truncated", R"({"model": "Llama-3.1-8B")", "body"},
                    BadRequest{"array", "[1, 2]", "body"}, BadRequest{"string", "\"hi\"", "body"},
                    BadRequest{"unknown_key", R"({"model": "Llama-3.1-8B", "tpp": 2})", "tpp"},
                    BadRequest{"wrong_type", R"({"model": "Llama-3.1-8B", "tp": "two"})", "tp"},
                    BadRequest{"bad_choice", R"({"model": "Llama-3.1-8B", "recompute": "x"})",
                               "recompute"},
                    BadRequest{"bad_layout", R"({"model": "Llama-3.1-8B", "tp": 3})", "tp"},
                    BadRequest{"zero_seq", R"({"model": "Llama-3.1-8B", "seq_len": 0})", "seq_len"},
                    BadRequest{"unknown_model", R"({"model": "No-Such-Model"})", "model"},
                    BadRequest{"model_path", R"({"model": "/etc/passwd"})", "model"},
                    BadRequest{"model_json_path", R"({"model": "config.json"})", "model"},
                    BadRequest{"model_home_path", R"({"model": "~/config.json"})", "model"},
                    BadRequest{"model_not_text", R"({"model": 7})", "model"},
                    BadRequest{"config_not_object", R"({"model_config": [1]})", "model_config"},
                    BadRequest{"unknown_gpu", R"({"model": "Llama-3.1-8B", "gpu": "tpu"})", "gpu"}),
    [](const testing::TestParamInfo<BadRequest>& info) { return info.param.name; });

TEST(Api, ModelPathsAreRefusedNotRead) {
  const json e = error_of(post("/api/estimate", R"({"model": "/etc/hostname"})"));
  EXPECT_NE(e["reason"].get<std::string>().find("does not read files"), std::string::npos);
  EXPECT_NE(e["accepted"].get<std::string>().find("model_config"), std::string::npos);
}

TEST(Api, DeeplyNestedJsonIsRefusedBeforeParsing) {
  const std::string deep = "{\"model_config\": " + std::string(100000, '[') + "}";
  const Response r = post("/api/estimate", deep);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_of(r)["field"], "body");
  // Brackets inside strings do not count.
  const std::string in_string = R"({"model": ")" + std::string(1000, '[') + "\"}";
  EXPECT_EQ(error_of(post("/api/estimate", in_string))["field"], "model");
}

TEST(Api, FormUploadsAreRefused) {
  Request request;
  request.method = "POST";
  request.path = "/api/estimate";
  request.content_type = "multipart/form-data; boundary=x";
  request.body = "{}";
  const Response r = handle_request(request);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_of(r)["field"], "body");
}

TEST(Api, InvalidUtf8InAnErrorIsStillJson) {
  // The parser rejects it, and the excerpt echoed back is made valid.
  const Response r = post("/api/estimate", "{\"model\": \"\xff\xfe\"}");
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(json::accept(r.body)) << r.body;
}

TEST(Api, ANumberBeyondDoubleIsABadBodyNotAServerError) {
  // Found by fuzzing: nlohmann's parser throws out_of_range (406), not parse_error, on 1e2212.
  for (const char* path : {"/api/estimate", "/api/infer", "/api/sweep"}) {
    const Response r = post(path, R"({"model": 1e2212})");
    EXPECT_EQ(r.status, 400) << path;
    EXPECT_EQ(error_of(r)["field"], "body") << path;
  }
}

TEST(Api, LongValuesAreNotEchoedWhole) {
  const std::string name(100000, 'x');
  const Response r = post("/api/estimate", R"({"model": ")" + name + "\"}");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_of(r)["field"], "model");
  EXPECT_LT(r.body.size(), 2000u);
}

TEST(Api, UnknownRoutesAre404ListingTheEndpoints) {
  for (const char* path : {"/api/nope", "/api", "/api/", "/api/gpusx", "/api/gpus/x"}) {
    const Response r = get(path);
    EXPECT_EQ(r.status, 404) << path;
    const json e = error_of(r);
    EXPECT_EQ(e["field"], "path");
    EXPECT_NE(e["accepted"].get<std::string>().find("POST /api/estimate"), std::string::npos);
  }
  // Under /api/models/ the rest is a model name: an unknown one is 404 naming "name".
  EXPECT_EQ(error_of(get("/api/models/a/b"))["field"], "name");
}

TEST(Api, TrailingSlashNamesTheSameEndpoint) { EXPECT_EQ(get("/api/gpus/").status, 200); }

TEST(Api, WrongMethodIs405WithAllow) {
  const Response r = get("/api/estimate");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(error_of(r)["field"], "method");
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0], std::make_pair(std::string("Allow"), std::string("POST")));
  EXPECT_EQ(post("/api/models", "{}").status, 405);
  EXPECT_EQ(call("DELETE", "/api/gpus").status, 405);
  EXPECT_EQ(call("PUT", "/").status, 405);
}

TEST(Api, HeadAnswersLikeGet) { EXPECT_EQ(call("HEAD", "/api/models").status, 200); }

TEST(Api, EveryRouteIsReachable) {
  for (const Route& route : api_routes()) {
    std::string path(route.pattern);
    const size_t brace = path.find('{');
    if (brace != std::string::npos) path = path.substr(0, brace) + "Llama-3.1-8B";
    const Response r = call(std::string(route.method), path, "{}");
    EXPECT_NE(r.status, 404) << path;
    EXPECT_NE(r.status, 405) << path;
    EXPECT_NE(r.status, 500) << path;
  }
}

TEST(Api, ConcurrentEstimatesAgree) {
  // estimate() is pure; the server calls it from a thread pool.
  const std::string body = R"({"model": "Qwen3-30B-A3B", "gpus": 16, "ep": 8})";
  const std::string expected = post("/api/estimate", body).body;
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) mismatches[t] += post("/api/estimate", body).body != expected;
    });
  for (std::thread& t : threads) t.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace vramplan::server
