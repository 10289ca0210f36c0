// The Hub client tests' fixture: one fixture Hub (tests/hub/fixture_server.py, a real HTTP server
// on 127.0.0.1 that answers as huggingface.co does) per suite, a fresh cache per test.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hub/hub_client.h"
#include "hub/test_fixture_hub.h"

namespace vramplan::hub::testing {

inline std::string fixture_file(const std::string& relative) {
  return read_small_file(std::filesystem::path(VRAMPLAN_SOURCE_DIR) / "tests/hub/repos" / relative,
                         1 << 20)
      .value_or("<missing fixture>");
}

inline ModelRef model_ref(const std::string& text) {
  Result<ModelRef> r = parse_model_ref(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.ok() ? r.value() : ModelRef{};
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The requests the fixture servers logged whose path contains `part`.
inline std::vector<nlohmann::json> requests(const FixtureHub& hub, const std::string& part) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& r : hub.log())
    if (contains(r["path"].get<std::string>(), part)) out.push_back(r);
  return out;
}

// One fixture Hub for the suite (starting Python once), a fresh cache per test.
class HubClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { hub_ = new FixtureHub({"--slow", "4"}); }
  static void TearDownTestSuite() {
    delete hub_;
    hub_ = nullptr;
  }
  void SetUp() override { hub_->clear_log(); }

  HubSettings settings() const { return hub_->settings(dir_.path()); }
  HubSettings with_token(const std::string& token) const {
    HubSettings s = settings();
    s.token = token;
    s.token_source = "HF_TOKEN";
    return s;
  }
  std::filesystem::path repo_dir(const std::string& repo_id) const {
    return dir_.path() / "hub" / repo_folder_name(repo_id);
  }

  static inline FixtureHub* hub_ = nullptr;
  TempDir dir_;
};

inline Error fetch_error(HubClient& client, const std::string& model) {
  Result<FetchedFile> file = client.fetch_config(model_ref(model));
  EXPECT_FALSE(file.ok()) << model;
  if (file.ok()) return Error{};
  EXPECT_EQ(file.error().field, "model");
  EXPECT_EQ(file.error().value, model);
  return file.error();
}

// The fixture's tiny Llama: h 64, f 128, V 256, 2 layers, 4 heads, 2 KV heads (d 16), untied.
// embed + head 2·256·64 = 32,768; per layer q,o 2·64·64 + k,v 2·32·64 + MLP 3·64·128 + 2 norms
// 2·64 = 8,192 + 4,096 + 24,576 + 128 = 36,992; final norm 64. Total 32,768 + 2·36,992 + 64.
inline constexpr int64_t kTinyParams = 32768 + 2 * 36992 + 64;  // 106,816

}  // namespace vramplan::hub::testing
