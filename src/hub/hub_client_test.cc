// The Hub client against the fixture Hub: configs, the cache, revisions, offline use, tokens,
// errors of every kind, redirects and TLS.
#include "hub/hub_client.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "hub/test_hub_client.h"

namespace vramplan::hub {
namespace {

namespace fs = std::filesystem;
using namespace testing;

TEST_F(HubClientTest, FetchesConfigAndCachesItAsHuggingfaceHubDoes) {
  HubClient client(settings());
  Result<FetchedFile> file = client.fetch_config(model_ref("tiny-org/tiny-llama"));
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file->content, fixture_file("tiny-org/tiny-llama/main/config.json"));
  EXPECT_FALSE(file->from_cache);
  ASSERT_TRUE(is_commit_hash(file->commit));
  const fs::path repo = repo_dir("tiny-org/tiny-llama");
  EXPECT_EQ(read_small_file(repo / "refs" / "main", 100), file->commit);
  const fs::path pointer = repo / "snapshots" / file->commit / "config.json";
  EXPECT_EQ(file->path, pointer.string());
  ASSERT_TRUE(fs::is_symlink(pointer));
  const fs::path target = fs::read_symlink(pointer);
  EXPECT_EQ(target.parent_path(), fs::path("../../blobs"));
  // The blob is named by the ETag the Hub sent (the git blob sha1, 40 hex digits).
  EXPECT_TRUE(is_commit_hash(target.filename().string()));
  EXPECT_EQ(read_small_file(repo / "blobs" / target.filename(), 1 << 20), file->content);
  // One GET of the resolve URL, nothing else.
  const auto sent = requests(*hub_, "config.json");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["path"], "/tiny-org/tiny-llama/resolve/main/config.json");
  EXPECT_EQ(sent[0]["method"], "GET");
  EXPECT_TRUE(sent[0]["authorization"].is_null());  // no token configured, none sent
}

TEST_F(HubClientTest, ACachedRevisionIsReadWithoutNetwork) {
  HubClient client(settings());
  ASSERT_TRUE(client.fetch_config(model_ref("tiny-org/tiny-llama")).ok());
  hub_->clear_log();
  HubClient again(settings());
  Result<FetchedFile> file = again.fetch_config(model_ref("tiny-org/tiny-llama"));
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_TRUE(file->from_cache);
  EXPECT_EQ(file->content, fixture_file("tiny-org/tiny-llama/main/config.json"));
  EXPECT_TRUE(hub_->log().empty());
}

TEST_F(HubClientTest, RefreshAsksTheHubAgainForBranchesButNotCommits) {
  HubClient client(settings());
  Result<FetchedFile> first = client.fetch_config(model_ref("tiny-org/tiny-llama"));
  ASSERT_TRUE(first.ok());
  hub_->clear_log();
  HubSettings refresh = settings();
  refresh.refresh = true;
  HubClient refreshing(refresh);
  Result<FetchedFile> again = refreshing.fetch_config(model_ref("tiny-org/tiny-llama"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->from_cache);
  EXPECT_EQ(requests(*hub_, "config.json").size(), 1u);
  hub_->clear_log();
  EXPECT_TRUE(
      refreshing.fetch_config(model_ref("tiny-org/tiny-llama@" + first->commit))->from_cache);
  EXPECT_TRUE(hub_->log().empty());
}

TEST_F(HubClientTest, TagsAndCommitsResolveToTheirOwnSnapshots) {
  HubClient client(settings());
  Result<FetchedFile> main = client.fetch_config(model_ref("tiny-org/tiny-llama"));
  Result<FetchedFile> tag = client.fetch_config(model_ref("tiny-org/tiny-llama@v1.0"));
  ASSERT_TRUE(main.ok() && tag.ok());
  EXPECT_NE(main->commit, tag->commit);
  EXPECT_EQ(tag->content, fixture_file("tiny-org/tiny-llama/v1.0/config.json"));
  EXPECT_EQ(read_small_file(repo_dir("tiny-org/tiny-llama") / "refs" / "v1.0", 100), tag->commit);
  // By commit: no refs entry is written for it, and the Hub is asked with the commit itself.
  TempDir other;
  HubClient fresh(hub_->settings(other.path()));
  Result<FetchedFile> by_commit =
      fresh.fetch_config(model_ref("tiny-org/tiny-llama@" + tag->commit));
  ASSERT_TRUE(by_commit.ok()) << by_commit.error().message();
  EXPECT_EQ(by_commit->content, tag->content);
  const fs::path refs = other.path() / "hub" / repo_folder_name("tiny-org/tiny-llama") / "refs";
  EXPECT_FALSE(fs::exists(refs / tag->commit));
}

TEST_F(HubClientTest, OfflineUsesTheCacheWithTheServerGone) {
  TempDir dir;
  std::string commit;
  {
    FixtureHub own;  // a server of its own, stopped below
    HubClient client(own.settings(dir.path()));
    Result<FetchedFile> file = client.fetch_config(model_ref("tiny-org/tiny-llama"));
    ASSERT_TRUE(file.ok()) << file.error().message();
    commit = file->commit;
    own.stop();
    HubSettings offline = own.settings(dir.path());
    offline.offline = true;
    HubClient cached(offline);
    Result<FetchedFile> again = cached.fetch_config(model_ref("tiny-org/tiny-llama"));
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_TRUE(again->from_cache);
    EXPECT_EQ(again->commit, commit);
    // Not offline, server gone: the cached revision still needs no network.
    HubClient online(own.settings(dir.path()));
    EXPECT_TRUE(online.fetch_config(model_ref("tiny-org/tiny-llama")).ok());
  }
}

TEST_F(HubClientTest, OfflineWithoutACachedCopyIsAnErrorAndSendsNothing) {
  HubSettings offline = settings();
  offline.offline = true;
  HubClient client(offline);
  const Error e = fetch_error(client, "tiny-org/tiny-llama");
  EXPECT_TRUE(contains(e.reason, "HF_HUB_OFFLINE")) << e.reason;
  EXPECT_TRUE(contains(e.reason, repo_dir("tiny-org/tiny-llama").string())) << e.reason;
  EXPECT_TRUE(hub_->log().empty());
}

// A cache laid out by transformers/huggingface_hub for a model the server does not have, and an
// endpoint where nothing listens: found all the same.
TEST_F(HubClientTest, FindsModelsThatTransformersDownloaded) {
  const std::string commit = "1111111111111111111111111111111111111111";
  const fs::path repo = repo_dir("someone/downloaded-before");
  const std::string config = fixture_file("tiny-org/tiny-llama/main/config.json");
  ASSERT_EQ(
      write_file_atomically(repo / "blobs" / "5c5fa9d1c7aa1c8a1ee1ab8d1de8d30a3c1e4a43", config),
      "");
  fs::create_directories(repo / "snapshots" / commit);
  fs::create_symlink("../../blobs/5c5fa9d1c7aa1c8a1ee1ab8d1de8d30a3c1e4a43",
                     repo / "snapshots" / commit / "config.json");
  ASSERT_EQ(write_file_atomically(repo / "refs" / "main", commit), "");
  HubSettings nowhere = settings();
  nowhere.endpoint = "http://127.0.0.1:1";
  HubClient client(nowhere);
  Result<FetchedFile> file = client.fetch_config(model_ref("someone/downloaded-before"));
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file->content, config);
  EXPECT_EQ(file->commit, commit);
  EXPECT_TRUE(file->from_cache);
  // Caches without symlinks (Windows) hold plain files in the snapshot: found too.
  const std::string other = "2222222222222222222222222222222222222222";
  ASSERT_EQ(write_file_atomically(repo / "snapshots" / other / "config.json", config), "");
  EXPECT_TRUE(client.fetch_config(model_ref("someone/downloaded-before@" + other)).ok());
  // A revision that is not cached goes to the (unreachable) endpoint.
  const Error e = fetch_error(client, "someone/downloaded-before@v2");
  EXPECT_TRUE(contains(e.reason, "cannot reach http://127.0.0.1:1")) << e.reason;
  EXPECT_TRUE(contains(e.reason, "HF_HUB_OFFLINE=1")) << e.reason;
}

TEST_F(HubClientTest, GatedRepoNeedsTheRightToken) {
  HubClient anonymous(settings());
  Error e = fetch_error(anonymous, "gated-org/gated-llama");
  EXPECT_TRUE(contains(e.reason, "gated or private (HTTP 401)")) << e.reason;
  EXPECT_TRUE(contains(e.reason, "HF_TOKEN")) << e.reason;
  EXPECT_TRUE(contains(e.reason, "huggingface-cli login")) << e.reason;
  EXPECT_TRUE(contains(e.reason, hub_->hub + "/gated-org/gated-llama")) << e.reason;

  HubClient wrong(with_token("hf_wrong"));
  e = fetch_error(wrong, "gated-org/gated-llama");
  EXPECT_TRUE(contains(e.reason, "token from HF_TOKEN was refused (HTTP 403)")) << e.reason;

  hub_->clear_log();
  HubClient right(with_token("hf_fixture_valid_token"));
  Result<FetchedFile> file = right.fetch_config(model_ref("gated-org/gated-llama"));
  ASSERT_TRUE(file.ok()) << file.error().message();
  const auto sent = requests(*hub_, "gated-llama");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["authorization"], "Bearer hf_fixture_valid_token");
}

TEST_F(HubClientTest, MissingRepoRevisionAndFileAreToldApart) {
  HubClient client(settings());
  Error e = fetch_error(client, "tiny-org/does-not-exist");
  EXPECT_TRUE(contains(e.reason, "no model repository tiny-org/does-not-exist on " + hub_->hub))
      << e.reason;
  EXPECT_TRUE(contains(e.reason, "HTTP 401")) << e.reason;  // the Hub hides private repos so

  HubClient with(with_token("hf_any"));
  e = fetch_error(with, "tiny-org/does-not-exist");
  EXPECT_TRUE(contains(e.reason, "that the token from HF_TOKEN can see (HTTP 404)")) << e.reason;

  e = fetch_error(client, "tiny-org/tiny-llama@no-such-branch");
  EXPECT_TRUE(contains(e.reason, "has no revision 'no-such-branch'")) << e.reason;

  e = fetch_error(client, "tiny-org/no-config");
  EXPECT_TRUE(contains(e.reason, "tiny-org/no-config has no config.json")) << e.reason;
  // Remembered as huggingface_hub does, so it is not asked again.
  hub_->clear_log();
  e = fetch_error(client, "tiny-org/no-config");
  EXPECT_TRUE(hub_->log().empty());
}

TEST_F(HubClientTest, NonJsonAnswersAreRefusedAndNotCached) {
  HubClient client(settings());
  const Error e = fetch_error(client, "tiny-org/not-json");
  EXPECT_TRUE(contains(e.reason, "is not JSON (text/html")) << e.reason;
  EXPECT_TRUE(contains(e.reason, "<!DOCTYPE html>")) << e.reason;
  EXPECT_FALSE(fs::exists(repo_dir("tiny-org/not-json") / "snapshots"));
}

TEST_F(HubClientTest, OversizedAnswersAreRefused) {
  HubClient client(settings());
  const Error e = fetch_error(client, "tiny-org/huge");
  EXPECT_TRUE(contains(e.reason, "more than 10 MiB")) << e.reason;
  EXPECT_FALSE(fs::exists(repo_dir("tiny-org/huge") / "snapshots"));
}

TEST_F(HubClientTest, SlowAnswersTimeOut) {
  HubSettings s = settings();
  s.total_timeout_s = 1;  // the fixture waits 4 s
  HubClient client(s);
  const Error e = fetch_error(client, "tiny-org/slow");
  EXPECT_TRUE(contains(e.reason, "no answer from " + hub_->hub + " within 1 s")) << e.reason;
  EXPECT_TRUE(contains(e.reason, "VRAMPLAN_HUB_TIMEOUT")) << e.reason;
}

TEST_F(HubClientTest, ServerErrorsAndRedirectLoops) {
  HubClient client(settings());
  Error e = fetch_error(client, "tiny-org/server-error");
  EXPECT_TRUE(contains(e.reason, "answered HTTP 500")) << e.reason;
  e = fetch_error(client, "tiny-org/loop");
  EXPECT_TRUE(contains(e.reason, "more than 10 redirects")) << e.reason;
}

TEST_F(HubClientTest, AnswersThatAreNotFromAHubAreRefused) {
  HubClient client(settings());
  Error e = fetch_error(client, "evil-org/no-commit");
  EXPECT_TRUE(contains(e.reason, "no commit id (X-Repo-Commit)")) << e.reason;
  e = fetch_error(client, "evil-org/bad-etag");
  EXPECT_TRUE(contains(e.reason, "no usable ETag")) << e.reason;
  // Nothing was written outside the cache (the ETag was ../../../../escaped).
  for (const auto& entry : fs::recursive_directory_iterator(dir_.path()))
    EXPECT_FALSE(contains(entry.path().string(), "escaped")) << entry.path();
  EXPECT_FALSE(fs::exists(dir_.path().parent_path() / "escaped"));
}

TEST_F(HubClientTest, UnreachableEndpointSaysHowToWorkOffline) {
  HubSettings s = settings();
  s.endpoint = "http://127.0.0.1:1";
  HubClient client(s);
  const Error e = fetch_error(client, "tiny-org/tiny-llama");
  EXPECT_TRUE(contains(e.reason, "cannot reach http://127.0.0.1:1")) << e.reason;
  EXPECT_TRUE(contains(e.reason, "HF_HUB_OFFLINE=1")) << e.reason;
}

// The Hub sends LFS files through a CDN on another host: the token must not follow.
TEST_F(HubClientTest, TheTokenNeverReachesAnotherHost) {
  HubClient client(with_token("hf_fixture_valid_token"));
  Result<FetchedFile> file = client.fetch_config(model_ref("tiny-org/via-cdn"));
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file->content, fixture_file("tiny-org/tiny-llama/main/config.json"));
  int hub_requests = 0;
  int cdn_requests = 0;
  for (const nlohmann::json& r : hub_->log()) {
    if (r["server"] == "hub") {
      ++hub_requests;
      EXPECT_EQ(r["authorization"], "Bearer hf_fixture_valid_token");
    } else {
      ++cdn_requests;
      EXPECT_TRUE(r["authorization"].is_null()) << r.dump();
    }
  }
  EXPECT_EQ(hub_requests, 1);
  EXPECT_EQ(cdn_requests, 1);
  // Cached under the ETag of the Hub's answer (X-Linked-Etag, a sha256), not the CDN's.
  const fs::path target =
      fs::read_symlink(repo_dir("tiny-org/via-cdn") / "snapshots" / file->commit / "config.json");
  EXPECT_EQ(target.filename().string().size(), 64u);
}

// A renamed repository answers with a relative redirect: same host, so the token goes along.
TEST_F(HubClientTest, RelativeRedirectsOfRenamedReposAreFollowed) {
  HubClient client(with_token("hf_any"));
  Result<FetchedFile> file = client.fetch_config(model_ref("old-org/renamed-llama"));
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file->content, fixture_file("tiny-org/tiny-llama/main/config.json"));
  const auto sent = hub_->log();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1]["path"], "/tiny-org/tiny-llama/resolve/main/config.json");
  for (const nlohmann::json& r : sent) EXPECT_EQ(r["authorization"], "Bearer hf_any");
  EXPECT_TRUE(fs::exists(repo_dir("old-org/renamed-llama") / "refs" / "main"));
}

// --- TLS ---------------------------------------------------------------------------------------

class HubTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { hub_ = new FixtureHub({"--https"}); }
  static void TearDownTestSuite() {
    delete hub_;
    hub_ = nullptr;
  }
  static FixtureHub* hub_;
  TempDir dir_;
};

FixtureHub* HubTlsTest::hub_ = nullptr;

TEST_F(HubTlsTest, UntrustedCertificateIsATlsError) {
  HubSettings s = hub_->settings(dir_.path());
  s.endpoint = hub_->https;
  s.token = "hf_fixture_valid_token";
  HubClient client(s);
  const Error e = fetch_error(client, "tiny-org/tiny-llama");
  EXPECT_TRUE(contains(e.reason, "TLS failure talking to " + hub_->https)) << e.reason;
  EXPECT_TRUE(contains(e.reason, "CURL_CA_BUNDLE")) << e.reason;
  EXPECT_TRUE(hub_->log().empty());  // the request, token included, was never sent
}

TEST_F(HubTlsTest, TrustedCertificateWorks) {
  HubSettings s = hub_->settings(dir_.path());
  s.endpoint = hub_->https;
  s.ca_bundle = hub_->ca;
  HubClient client(s);
  Result<FetchedFile> file = client.fetch_config(model_ref("tiny-org/tiny-llama"));
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file->content, fixture_file("tiny-org/tiny-llama/main/config.json"));
}

}  // namespace
}  // namespace vramplan::hub
