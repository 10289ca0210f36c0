#include "hub/settings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "hub/test_fixture_hub.h"

namespace vramplan::hub {
namespace {

using testing::TempDir;

// A made-up environment: only what a test puts in it.
class FakeEnv {
 public:
  explicit FakeEnv(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {}
  EnvLookup lookup() const {
    return [this](const char* name) -> std::optional<std::string> {
      auto it = vars_.find(name);
      if (it == vars_.end()) return std::nullopt;
      return it->second;
    };
  }

 private:
  std::map<std::string, std::string> vars_;
};

HubSettings settings_of(const std::map<std::string, std::string>& vars) {
  FakeEnv env(vars);
  Result<HubSettings> s = settings_from_environment(env.lookup());
  EXPECT_TRUE(s.ok()) << s.error().message();
  return s.ok() ? s.value() : HubSettings{};
}

Error error_of(const std::map<std::string, std::string>& vars) {
  FakeEnv env(vars);
  Result<HubSettings> s = settings_from_environment(env.lookup());
  EXPECT_FALSE(s.ok());
  return s.ok() ? Error{} : s.error();
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(HubSettingsTest, DefaultsAreHuggingfaceHubs) {
  const HubSettings s = settings_of({{"HOME", "/home/u"}});
  EXPECT_EQ(s.endpoint, "https://huggingface.co");
  EXPECT_EQ(s.cache_dir, "/home/u/.cache/huggingface/hub");
  EXPECT_EQ(s.checkpoint_dir, "/home/u/.cache/vramplan/checkpoints");
  EXPECT_FALSE(s.token);
  EXPECT_FALSE(s.offline);
  EXPECT_EQ(s.connect_timeout_s, 10);
  EXPECT_EQ(s.total_timeout_s, 30);
  EXPECT_EQ(s.ca_bundle, "");
}

TEST(HubSettingsTest, CacheDirectoryPrecedence) {
  EXPECT_EQ(settings_of({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/xdg"}}).cache_dir,
            "/xdg/huggingface/hub");
  EXPECT_EQ(settings_of({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/xdg"}, {"HF_HOME", "/hf"}}).cache_dir,
            "/hf/hub");
  EXPECT_EQ(settings_of({{"HF_HOME", "/hf"}, {"HUGGINGFACE_HUB_CACHE", "/legacy"}}).cache_dir,
            "/legacy");
  EXPECT_EQ(
      settings_of(
          {{"HF_HOME", "/hf"}, {"HUGGINGFACE_HUB_CACHE", "/legacy"}, {"HF_HUB_CACHE", "/new"}})
          .cache_dir,
      "/new");
  EXPECT_EQ(settings_of({{"HOME", "/h"}, {"HF_HUB_CACHE", "~/c"}}).cache_dir, "/h/c");
  EXPECT_EQ(settings_of({{"HOME", "/h"}, {"HF_HUB_CACHE", ""}}).cache_dir,
            "/h/.cache/huggingface/hub");  // empty means unset, as `os.getenv(...) or ...`
  EXPECT_EQ(settings_of({{"VRAMPLAN_CACHE_DIR", "/v"}}).checkpoint_dir, "/v/checkpoints");
}

TEST(HubSettingsTest, EndpointFromHfEndpointWithoutTrailingSlash) {
  EXPECT_EQ(settings_of({{"HF_ENDPOINT", "https://hf-mirror.com/"}}).endpoint,
            "https://hf-mirror.com");
  EXPECT_EQ(settings_of({{"HF_ENDPOINT", "http://127.0.0.1:8080"}}).endpoint,
            "http://127.0.0.1:8080");
  for (const char* bad : {"huggingface.co", "ftp://x", "https://", "https://a b", "file:///etc"}) {
    const Error e = error_of({{"HF_ENDPOINT", bad}});
    EXPECT_EQ(e.field, "HF_ENDPOINT") << bad;
    EXPECT_EQ(e.value, bad);
  }
}

TEST(HubSettingsTest, TokenFromEnvironmentBeforeTokenFile) {
  TempDir dir;
  write(dir.path() / "hf" / "token", "hf_from_file\n");
  const std::string hf_home = (dir.path() / "hf").string();
  HubSettings s = settings_of({{"HF_HOME", hf_home}});
  EXPECT_EQ(s.token, "hf_from_file");
  EXPECT_EQ(s.token_source, hf_home + "/token");
  s = settings_of({{"HF_HOME", hf_home}, {"HF_TOKEN", " hf_env \n"}});
  EXPECT_EQ(s.token, "hf_env");
  EXPECT_EQ(s.token_source, "HF_TOKEN");
  s = settings_of({{"HF_HOME", hf_home}, {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}});
  EXPECT_EQ(s.token, "hf_legacy");
  EXPECT_EQ(
      settings_of(
          {{"HF_HOME", hf_home}, {"HF_TOKEN", "hf_env"}, {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}})
          .token,
      "hf_env");
}

TEST(HubSettingsTest, TokenFileFromHfTokenPathOrDefaultHome) {
  TempDir dir;
  write(dir.path() / "elsewhere" / "tok", "hf_custom");
  write(dir.path() / ".cache" / "huggingface" / "token", "hf_default\r\n");
  EXPECT_EQ(settings_of({{"HOME", dir.path().string()}}).token, "hf_default");
  EXPECT_EQ(settings_of({{"HOME", dir.path().string()},
                         {"HF_TOKEN_PATH", (dir.path() / "elsewhere" / "tok").string()}})
                .token,
            "hf_custom");
  EXPECT_FALSE(settings_of({{"HOME", "/nonexistent"}}).token);
}

TEST(HubSettingsTest, EmptyTokenFileIsNoToken) {
  TempDir dir;
  write(dir.path() / "token", "  \n");
  EXPECT_FALSE(settings_of({{"HF_HOME", dir.path().string()}}).token);
}

TEST(HubSettingsTest, DisableImplicitTokenSendsNone) {
  TempDir dir;
  write(dir.path() / "token", "hf_file");
  EXPECT_FALSE(settings_of({{"HF_HOME", dir.path().string()},
                            {"HF_TOKEN", "hf_env"},
                            {"HF_HUB_DISABLE_IMPLICIT_TOKEN", "1"}})
                   .token);
}

TEST(HubSettingsTest, OfflineTakesHuggingfaceHubsTrueValues) {
  for (const char* yes : {"1", "ON", "yes", "True"}) {
    EXPECT_TRUE(settings_of({{"HF_HUB_OFFLINE", yes}}).offline) << yes;
    EXPECT_TRUE(settings_of({{"TRANSFORMERS_OFFLINE", yes}}).offline) << yes;
  }
  for (const char* no : {"0", "", "off", "false", "2"})
    EXPECT_FALSE(settings_of({{"HF_HUB_OFFLINE", no}}).offline) << no;
}

TEST(HubSettingsTest, TimeoutInSeconds) {
  HubSettings s = settings_of({{"VRAMPLAN_HUB_TIMEOUT", "2.5"}});
  EXPECT_EQ(s.total_timeout_s, 2.5);
  EXPECT_EQ(s.connect_timeout_s, 2.5);  // never longer than the whole request
  EXPECT_EQ(settings_of({{"VRAMPLAN_HUB_TIMEOUT", "60"}}).connect_timeout_s, 10);
  for (const char* bad : {"abc", "0", "-1", "nan", "inf", "5s", "4000"}) {
    const Error e = error_of({{"VRAMPLAN_HUB_TIMEOUT", bad}});
    EXPECT_EQ(e.field, "VRAMPLAN_HUB_TIMEOUT") << bad;
    EXPECT_EQ(e.value, bad);
  }
}

TEST(HubSettingsTest, CaBundleFromRequestsOrCurlVariables) {
  EXPECT_EQ(settings_of({{"CURL_CA_BUNDLE", "/c.pem"}}).ca_bundle, "/c.pem");
  EXPECT_EQ(settings_of({{"CURL_CA_BUNDLE", "/c.pem"}, {"REQUESTS_CA_BUNDLE", "/r.pem"}}).ca_bundle,
            "/r.pem");
  EXPECT_EQ(settings_of({{"SSL_CERT_FILE", "/s.pem"}}).ca_bundle, "/s.pem");
}

TEST(HubSettingsTest, RefreshFlag) {
  EXPECT_TRUE(settings_of({{"VRAMPLAN_HUB_REFRESH", "1"}}).refresh);
  EXPECT_FALSE(settings_of({}).refresh);
}

}  // namespace
}  // namespace vramplan::hub
