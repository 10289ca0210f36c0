// Hub models through the API against tests/hub/fixture_server.py (a stand-in for the Hugging Face
// Hub on 127.0.0.1): GET /api/hub/..., "model": "org/name" in /api/estimate and /api/infer, the
// server's token policy, and each Hub failure as its HTTP status.
#include <gtest/gtest.h>

#include <string>

#include "hub/test_fixture_hub.h"
#include "server/api.h"
#include "server/hub_access.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_request.h"

namespace vramplan::server {
namespace {

using hub::HubFailure;
using hub::testing::FixtureHub;
using hub::testing::TempDir;
using nlohmann::json;

constexpr int64_t kTinyParams = 106816;  // tests/hub/repos/tiny-org/tiny-llama (hub tests)
constexpr const char* kValidToken = "hf_fixture_valid_token";

Response call(const std::string& method, const std::string& path, const std::string& body = "") {
  Request request;
  request.method = method;
  request.path = path;
  request.body = body;
  return handle_request(request);
}

json error_of(const Response& r) { return json::parse(r.body).at("error"); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HubAccess, StatusPerFailure) {
  EXPECT_EQ(hub_failure_status(HubFailure::kNone), 400);
  EXPECT_EQ(hub_failure_status(HubFailure::kInvalidId), 400);
  EXPECT_EQ(hub_failure_status(HubFailure::kUnauthorized), 403);
  EXPECT_EQ(hub_failure_status(HubFailure::kNotFound), 404);
  EXPECT_EQ(hub_failure_status(HubFailure::kOffline), 503);
  EXPECT_EQ(hub_failure_status(HubFailure::kRateLimited), 503);
  EXPECT_EQ(hub_failure_status(HubFailure::kTimeout), 504);
  EXPECT_EQ(hub_failure_status(HubFailure::kUnreachable), 502);
  EXPECT_EQ(hub_failure_status(HubFailure::kBadAnswer), 502);
  EXPECT_EQ(hub_failure_status(HubFailure::kUpstreamError), 502);
  EXPECT_EQ(hub_failure_status(HubFailure::kSettings), 500);
}

TEST(HubAccess, TheHostsTokenIsDroppedUnlessAskedFor) {
  hub::HubSettings env;
  env.token = "hf_secret";
  env.token_source = "HF_TOKEN";
  env.endpoint = "https://example.test";
  const hub::HubSettings dropped = server_hub_settings(env, false);
  EXPECT_FALSE(dropped.token);
  EXPECT_EQ(dropped.token_source, "");
  EXPECT_EQ(dropped.endpoint, "https://example.test");
  EXPECT_EQ(server_hub_settings(env, true).token, "hf_secret");
}

// One fixture Hub for the suite, a fresh cache per test, the server configured to use both.
class HubApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { hub_ = new FixtureHub({"--slow", "3"}); }
  static void TearDownTestSuite() {
    delete hub_;
    hub_ = nullptr;
  }
  void SetUp() override {
    hub_->clear_log();
    configure_hub(hub_->settings(dir_.path()));
  }
  void TearDown() override { configure_hub(std::nullopt); }

  void configure(const std::function<void(hub::HubSettings&)>& change) {
    hub::HubSettings s = hub_->settings(dir_.path());
    change(s);
    configure_hub(s);
  }

  static FixtureHub* hub_;
  TempDir dir_;
};

FixtureHub* HubApiTest::hub_ = nullptr;

TEST_F(HubApiTest, HubModelShowsCommitConfigCheckpointAndNotes) {
  const Response r = call("GET", "/api/hub/tiny-org/tiny-llama");
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = json::parse(r.body);
  EXPECT_EQ(body["model"], "tiny-org/tiny-llama");
  EXPECT_EQ(body["commit"].get<std::string>().size(), 40u);
  EXPECT_EQ(body["config"]["model_type"], "llama");
  EXPECT_EQ(body["parameters"]["total"], kTinyParams);
  EXPECT_TRUE(body["model_error"].is_null());
  EXPECT_EQ(body["checkpoint"]["available"], true);
  EXPECT_EQ(body["checkpoint"]["params"], kTinyParams);
  EXPECT_EQ(body["checkpoint"]["commit"], body["commit"]);
  ASSERT_EQ(body["notes"].size(), 2u) << body["notes"];
  EXPECT_TRUE(contains(body["notes"][0], "downloaded from " + hub_->hub));
  EXPECT_TRUE(contains(body["notes"][1], "the same as vramplan's parameter count"));
  // A revision, and the second time from the cache without a request.
  const Response tagged = call("GET", "/api/hub/tiny-org/tiny-llama@v1.0");
  ASSERT_EQ(tagged.status, 200) << tagged.body;
  EXPECT_NE(json::parse(tagged.body)["commit"], body["commit"]);
  hub_->clear_log();
  const Response again = call("GET", "/api/hub/tiny-org/tiny-llama");
  EXPECT_EQ(json::parse(again.body)["commit"], body["commit"]);
  EXPECT_TRUE(hub_->log().empty()) << hub_->log();
}

TEST_F(HubApiTest, EstimateAndInferFetchTheModelAsTheCliDoes) {
  const json settings = {{"model", "tiny-org/tiny-llama"}, {"seq_len", 256}};
  const Response r = call("POST", "/api/estimate", settings.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = json::parse(r.body);
  EXPECT_EQ(body["parameters"]["total"], kTinyParams);
  EXPECT_EQ(body["checkpoint"]["params"], kTinyParams);
  bool noted = false;
  for (const json& w : body["warnings"]) noted |= contains(w, "config.json of tiny-org/tiny-llama");
  EXPECT_TRUE(noted) << body["warnings"];

  const Response infer = call("POST", "/api/infer", R"({"model": "tiny-org/tiny-llama"})");
  ASSERT_EQ(infer.status, 200) << infer.body;
  EXPECT_EQ(json::parse(infer.body)["checkpoint"]["available"], true);
  EXPECT_GT(json::parse(infer.body)["kv_bytes_per_token"].get<int64_t>(), 0);
}

TEST_F(HubApiTest, NoTokenIsSentByDefault) {
  // configure_hub got settings without a token, as `vramplan serve` makes them by default: the
  // gated model is refused with 403, and the reason says how the operator can change that.
  const Response r = call("GET", "/api/hub/gated-org/gated-llama");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(error_of(r)["field"], "model");
  EXPECT_TRUE(contains(error_of(r)["reason"], "--hub-token")) << r.body;
  for (const json& request : hub_->log()) EXPECT_TRUE(request["authorization"].is_null());
}

TEST_F(HubApiTest, WithHubTokenTheGatedModelIsFetched) {
  configure([](hub::HubSettings& s) {
    s.token = kValidToken;
    s.token_source = "HF_TOKEN";
  });
  const Response r = call("GET", "/api/hub/gated-org/gated-llama");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(HubApiTest, EachFailureHasItsStatus) {
  struct Case {
    const char* path;
    int status;
  };
  for (const Case& c :
       {Case{"/api/hub/tiny-org/no-such-repo", 404},
        Case{"/api/hub/tiny-org/tiny-llama@no-such-branch", 404},
        Case{"/api/hub/tiny-org/no-config", 404}, Case{"/api/hub/tiny-org/not-json", 502},
        Case{"/api/hub/tiny-org/server-error", 502}, Case{"/api/hub/tiny-org/loop", 502},
        Case{"/api/hub/evil-org/no-commit", 502}, Case{"/api/hub/org/na..me", 400},
        Case{"/api/hub/https://evil.example/x", 400}, Case{"/api/hub/Llama-3.1-8B", 400}}) {
    const Response r = call("GET", c.path);
    EXPECT_EQ(r.status, c.status) << c.path << ": " << r.body;
    EXPECT_EQ(error_of(r)["field"], "model") << c.path;
  }
}

TEST_F(HubApiTest, TimeoutIs504) {
  configure([](hub::HubSettings& s) { s.total_timeout_s = 0.5; });
  const Response r = call("POST", "/api/infer", R"({"model": "tiny-org/slow"})");
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_EQ(error_of(r)["field"], "model");
}

TEST_F(HubApiTest, UnreachableIs502AndOfflineWithoutCacheIs503) {
  configure([](hub::HubSettings& s) { s.endpoint = "http://127.0.0.1:9"; });  // discard: closed
  const Response unreachable = call("POST", "/api/estimate", R"({"model": "tiny-org/tiny-llama"})");
  EXPECT_EQ(unreachable.status, 502) << unreachable.body;
  configure([](hub::HubSettings& s) { s.offline = true; });
  const Response offline = call("POST", "/api/estimate", R"({"model": "tiny-org/tiny-llama"})");
  EXPECT_EQ(offline.status, 503) << offline.body;
  EXPECT_TRUE(contains(error_of(offline)["reason"], "HF_HUB_OFFLINE")) << offline.body;
  // Fetched once with network, the model is then served offline from the cache.
  configure([](hub::HubSettings&) {});
  ASSERT_EQ(call("GET", "/api/hub/tiny-org/tiny-llama").status, 200);
  configure([](hub::HubSettings& s) { s.offline = true; });
  EXPECT_EQ(call("POST", "/api/estimate", R"({"model": "tiny-org/tiny-llama"})").status, 200);
}

TEST_F(HubApiTest, ScenarioErrorsAfterAFetchAreStill400) {
  const Response r = call("POST", "/api/estimate", R"({"model": "tiny-org/tiny-llama", "tp": 3})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_of(r)["field"], "tp");
}

}  // namespace
}  // namespace vramplan::server
