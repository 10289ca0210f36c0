// HubModels, what the front ends call: the model's source, its checkpoint and the failures.
#include "hub/hub_models.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "hub/test_hub_client.h"

namespace vramplan::hub {
namespace {

namespace fs = std::filesystem;
using namespace testing;

// --- HubModels: what front ends call -----------------------------------------------------------

TEST_F(HubClientTest, ModelsReportTheSourceAndTheCheckpoint) {
  HubModels models(settings());
  ModelFetcher fetch = models.fetcher();
  Result<std::string> config = fetch("tiny-org/tiny-llama");
  ASSERT_TRUE(config.ok()) << config.error().message();
  std::vector<std::string> notes;
  std::optional<nlohmann::json> checkpoint = models.report(kTinyParams, notes);
  ASSERT_TRUE(checkpoint);
  EXPECT_EQ((*checkpoint)["available"], true);
  EXPECT_EQ((*checkpoint)["params"], kTinyParams);
  EXPECT_EQ((*checkpoint)["dtypes"]["BF16"], kTinyParams);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_TRUE(contains(notes[0], "downloaded from " + hub_->hub)) << notes[0];
  EXPECT_TRUE(contains(notes[1], "the same as vramplan's parameter count")) << notes[1];
}

TEST_F(HubClientTest, ModelsWithoutAHubFetchReportNothing) {
  HubModels models(settings());
  std::vector<std::string> notes;
  EXPECT_FALSE(models.report(1, notes));
  EXPECT_TRUE(notes.empty());
}

TEST_F(HubClientTest, ModelsUnavailableCheckpointIsANote) {
  HubModels models(settings());
  ASSERT_TRUE(models.fetch_config("tiny-org/no-weights").ok());
  std::vector<std::string> notes;
  std::optional<nlohmann::json> checkpoint = models.report(kTinyParams, notes);
  ASSERT_TRUE(checkpoint);
  EXPECT_EQ((*checkpoint)["available"], false);
  EXPECT_TRUE(contains((*checkpoint)["reason"].get<std::string>(), "no safetensors"));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_TRUE(contains(notes[1], "checkpoint size and dtypes not available")) << notes[1];
}

TEST_F(HubClientTest, ALocalFileWinsOverAHubIdWhenFilesMayBeRead) {
  TempDir dir;
  const fs::path local = dir.path() / "tiny-org" / "tiny-llama";
  ASSERT_EQ(write_file_atomically(local, "{\"local\": true}"), "");
  HubModels models(settings());
  bool read_locally = false;
  ModelFetcher fetch = models.fetcher([&](const std::string& path) -> Result<std::string> {
    read_locally = true;
    return read_small_file(path, 1 << 20).value_or("");
  });
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir.path());
  Result<std::string> text = fetch("tiny-org/tiny-llama");
  fs::current_path(old_cwd);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(read_locally);
  EXPECT_EQ(*text, "{\"local\": true}");
  EXPECT_TRUE(hub_->log().empty());
  // A server passes no reader: the Hub answers.
  Result<std::string> from_hub = models.fetcher()("tiny-org/tiny-llama");
  ASSERT_TRUE(from_hub.ok());
  EXPECT_EQ(*from_hub, fixture_file("tiny-org/tiny-llama/main/config.json"));
}

TEST_F(HubClientTest, EachFailureHasItsKind) {
  struct Case {
    const char* model;
    HubFailure kind;
  };
  for (const Case& c : {Case{"tiny-org/tiny-llama", HubFailure::kNone},
                        Case{"gated-org/gated-llama", HubFailure::kUnauthorized},
                        Case{"tiny-org/no-such-repo", HubFailure::kNotFound},
                        Case{"tiny-org/tiny-llama@no-such-branch", HubFailure::kNotFound},
                        Case{"tiny-org/no-config", HubFailure::kNotFound},
                        Case{"tiny-org/not-json", HubFailure::kBadAnswer},
                        Case{"tiny-org/loop", HubFailure::kBadAnswer},
                        Case{"evil-org/no-commit", HubFailure::kBadAnswer},
                        Case{"tiny-org/server-error", HubFailure::kUpstreamError},
                        Case{"org/na..me", HubFailure::kInvalidId}}) {
    HubModels models(settings());
    (void)models.fetch_config(c.model);
    EXPECT_EQ(models.failure(), c.kind) << c.model;
  }
  HubSettings unreachable = settings();
  unreachable.endpoint = "http://127.0.0.1:9";
  HubModels closed_port(unreachable);
  EXPECT_FALSE(closed_port.fetch_config("tiny-org/tiny-sharded").ok());  // not cached yet
  EXPECT_EQ(closed_port.failure(), HubFailure::kUnreachable);
  HubSettings offline = settings();
  offline.offline = true;
  HubModels cache_only(offline);
  EXPECT_FALSE(cache_only.fetch_config("tiny-org/big-header").ok());
  EXPECT_EQ(cache_only.failure(), HubFailure::kOffline);
  HubSettings impatient = settings();
  impatient.total_timeout_s = 0.5;
  HubModels slow(impatient);
  EXPECT_FALSE(slow.fetch_config("tiny-org/slow").ok());
  EXPECT_EQ(slow.failure(), HubFailure::kTimeout);
}

TEST_F(HubClientTest, ModelsRefuseBadIdsBeforeAnyNetwork) {
  HubModels models(settings());
  for (const char* bad : {"https://evil.example/x/y", "a/b/c", "org/na..me", "org/name@a b"}) {
    Result<std::string> text = models.fetch_config(bad);
    ASSERT_FALSE(text.ok()) << bad;
    EXPECT_EQ(text.error().field, "model");
  }
  EXPECT_TRUE(hub_->log().empty());
}

}  // namespace
}  // namespace vramplan::hub
