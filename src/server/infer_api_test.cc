// /api/infer and /api/infer/options: the serving estimate through the pure API layer.
#include <gtest/gtest.h>

#include <string>

#include "server/api.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/io/inference_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/report/inference_report.h"
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

json error_of(const Response& r) {
  const json e = json::parse(r.body).at("error");
  for (const char* key : {"field", "value", "accepted", "reason", "message"})
    EXPECT_TRUE(e.contains(key)) << key << " missing in " << r.body;
  return e;
}

TEST(InferApi, OptionsListEveryServingSettingInTheShapeOfApiOptions) {
  const Response r = call("GET", "/api/infer/options");
  ASSERT_EQ(r.status, 200);
  const json options = json::parse(r.body).at("options");
  ASSERT_EQ(options.size(), inference_options().size());
  for (size_t i = 0; i < options.size(); ++i) {
    const OptionSpec& spec = inference_options()[i];
    EXPECT_EQ(options[i]["key"], spec.key);
    EXPECT_EQ(options[i]["flag"], flag_name(spec.key));
    EXPECT_EQ(options[i]["group"], spec.group);
    EXPECT_EQ(options[i]["help"], spec.help);
    EXPECT_EQ(options[i].size(), 7u) << options[i];
  }
  for (const json& o : options) {
    if (o["key"] == "kv_dtype") {
      EXPECT_EQ(o["kind"], "choice");
      EXPECT_EQ(o["choices"], json({"auto", "bf16", "fp16", "fp32", "fp8", "int8", "int4"}));
    }
    if (o["key"] == "gpu_memory_utilization") {
      EXPECT_EQ(o["kind"], "number");
    }
  }
  // The training options are a different list.
  EXPECT_NE(call("GET", "/api/options").body, r.body);
}

TEST(InferApi, InferIsTheCliJson) {
  const json settings = {
      {"model", "Llama-3.1-8B"}, {"tp", 2}, {"context", 8192}, {"gpu_memory_utilization", 0.9}};
  const Response r = call("POST", "/api/infer", settings.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  Result<SettingsInference> expected = infer_settings(settings, nullptr);
  ASSERT_TRUE(expected.ok());
  const json body = json::parse(r.body);
  EXPECT_EQ(body, settings_inference_to_json(*expected));
  EXPECT_GT(body["max_kv_tokens"].get<int64_t>(), 0);
  EXPECT_EQ(body["fit"][0]["gpu"], "h100-80gb");
  EXPECT_EQ(body["scenario"]["tp"], 2);
  const Response pretty = call("POST", "/api/infer", settings.dump(), {{"pretty", "1"}});
  EXPECT_EQ(pretty.body, settings_inference_to_json(*expected).dump(2) + "\n");
}

TEST(InferApi, WithoutAFractionThereIsNoCapacity) {
  const Response r = call("POST", "/api/infer", R"({"model": "Qwen3-8B", "batch": "4"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = json::parse(r.body);
  EXPECT_TRUE(body["max_kv_tokens"].is_null());
  EXPECT_EQ(body["kv_cache_bytes"], 4 * body["kv_bytes_per_sequence"].get<int64_t>());
}

struct BadInfer {
  const char* name;
  const char* body;
  const char* field;
};

class InferRejects : public testing::TestWithParam<BadInfer> {};

TEST_P(InferRejects, With400NamingTheField) {
  const Response r = call("POST", "/api/infer", GetParam().body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r)["field"], GetParam().field) << r.body;
}

INSTANTIATE_TEST_SUITE_P(
    InferApi, InferRejects,
    testing::Values(
        BadInfer{"empty", "", "body"}, BadInfer{"not_object", "[1]", "body"},
        BadInfer{"training_key", R"({"model": "Llama-3.1-8B", "seq_len": 4096})", "seq_len"},
        BadInfer{"bad_tp", R"({"model": "Llama-3.1-8B", "tp": 3})", "tp"},
        BadInfer{"bad_kv_dtype", R"({"model": "Llama-3.1-8B", "kv_dtype": "fp9"})", "kv_dtype"},
        BadInfer{"bad_weight_dtype", R"({"model": "Llama-3.1-8B", "weight_dtype": "q4"})",
                 "weight_dtype"},
        BadInfer{"bad_fraction", R"({"model": "Llama-3.1-8B", "gpu_memory_utilization": 1.5})",
                 "gpu_memory_utilization"},
        BadInfer{"zero_context", R"({"model": "Llama-3.1-8B", "context": 0})", "context"},
        BadInfer{"unknown_gpu", R"({"model": "Llama-3.1-8B", "gpu": "tpu"})", "gpu"},
        BadInfer{"model_path", R"({"model": "/etc/passwd"})", "model"},
        BadInfer{"unknown_model", R"({"model": "No-Such-Model"})", "model"}),
    [](const testing::TestParamInfo<BadInfer>& info) { return info.param.name; });

TEST(InferApi, MethodsAreChecked) {
  const Response get = call("GET", "/api/infer");
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(error_of(get)["accepted"], "POST");
  const Response post_options = call("POST", "/api/infer/options", "{}");
  EXPECT_EQ(post_options.status, 405);
  EXPECT_EQ(error_of(post_options)["accepted"], "GET, HEAD");
}

}  // namespace
}  // namespace vramplan::server
