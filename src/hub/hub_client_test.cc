// The Hub client against tests/hub/fixture_server.py: a real HTTP server on 127.0.0.1 that
// answers as huggingface.co does (see its docstring for the fixture repositories).
#include "hub/hub_client.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "hub/fixture_hub_for_tests.h"
#include "hub/hub_models.h"

namespace vramplan::hub {
namespace {

namespace fs = std::filesystem;
using testing::FixtureHub;
using testing::TempDir;

std::string fixture_file(const std::string& relative) {
  return read_small_file(fs::path(VRAMPLAN_SOURCE_DIR) / "tests/hub/repos" / relative, 1 << 20)
      .value_or("<missing fixture>");
}

ModelRef model_ref(const std::string& text) {
  Result<ModelRef> r = parse_model_ref(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.ok() ? r.value() : ModelRef{};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The requests the fixture servers logged whose path contains `part`.
std::vector<nlohmann::json> requests(const FixtureHub& hub, const std::string& part) {
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
  fs::path repo_dir(const std::string& repo_id) const {
    return dir_.path() / "hub" / repo_folder_name(repo_id);
  }

  static FixtureHub* hub_;
  TempDir dir_;
};

FixtureHub* HubClientTest::hub_ = nullptr;

Error fetch_error(HubClient& client, const std::string& model) {
  Result<FetchedFile> file = client.fetch_config(model_ref(model));
  EXPECT_FALSE(file.ok()) << model;
  if (file.ok()) return Error{};
  EXPECT_EQ(file.error().field, "model");
  EXPECT_EQ(file.error().value, model);
  return file.error();
}

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

// --- checkpoint: stored size and dtypes -------------------------------------------------------

// The fixture's tiny Llama: h 64, f 128, V 256, 2 layers, 4 heads, 2 KV heads (d 16), untied.
// embed + head 2·256·64 = 32,768; per layer q,o 2·64·64 + k,v 2·32·64 + MLP 3·64·128 + 2 norms
// 2·64 = 8,192 + 4,096 + 24,576 + 128 = 36,992; final norm 64. Total 32,768 + 2·36,992 + 64.
constexpr int64_t kTinyParams = 32768 + 2 * 36992 + 64;  // 106,816

Result<CheckpointSummary> checkpoint_of(HubClient& client, const std::string& model) {
  Result<FetchedFile> config = client.fetch_config(model_ref(model));
  if (!config) return config.error();
  return client.checkpoint(model_ref(model).repo_id, config->commit);
}

TEST_F(HubClientTest, SingleFileCheckpointFromItsHeader) {
  HubClient client(settings());
  Result<CheckpointSummary> s = checkpoint_of(client, "tiny-org/tiny-llama");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_TRUE(s->dtypes_known);
  EXPECT_EQ(s->source, "model.safetensors header");
  EXPECT_EQ(s->files, 1);
  EXPECT_EQ(s->stats.dtype_elements, (std::map<std::string, int64_t>{{"BF16", kTinyParams}}));
  EXPECT_EQ(s->total_bytes, 2 * kTinyParams);
  // Only headers were read: every request for the weights asked for a byte range, and the Hub
  // was told the index does not exist.
  for (const nlohmann::json& r : requests(*hub_, "safetensors")) {
    const bool weights = !contains(r["path"].get<std::string>(), "index.json");
    EXPECT_TRUE(!weights || r["range"].is_string()) << r.dump();
  }
  EXPECT_TRUE(client.cache().known_missing("tiny-org/tiny-llama", s->commit,
                                           "model.safetensors.index.json"));
}

TEST_F(HubClientTest, ShardedCheckpointFromIndexAndEveryShardHeader) {
  HubSettings s = settings();
  s.parallel_requests = 2;
  HubClient client(s);
  Result<CheckpointSummary> c = checkpoint_of(client, "tiny-org/tiny-sharded");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->source, "model.safetensors.index.json + 2 shard headers");
  EXPECT_EQ(c->files, 2);
  // The norms are stored in F32: 2 layers · 2 norms · 64 + the final norm's 64 = 320.
  EXPECT_EQ(c->stats.dtype_elements,
            (std::map<std::string, int64_t>{{"BF16", kTinyParams - 320}, {"F32", 320}}));
  EXPECT_EQ(c->stats.elements, kTinyParams);
  EXPECT_EQ(c->total_bytes, 2 * (kTinyParams - 320) + 4 * 320);
  // Each shard: the Hub's 302, then one range request to the CDN.
  EXPECT_EQ(requests(*hub_, "model-0000").size(), 2u);
  EXPECT_EQ(requests(*hub_, "/repos/").size(), 2u);
}

TEST_F(HubClientTest, HeadersAbove64KiBTakeASecondRangeRequest) {
  HubClient client(settings());
  Result<CheckpointSummary> c = checkpoint_of(client, "tiny-org/big-header");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->stats.elements, kTinyParams);
  std::vector<std::string> ranges;
  for (const nlohmann::json& r : requests(*hub_, "/repos/")) ranges.push_back(r["range"]);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0], "bytes=0-65535");
  EXPECT_TRUE(ranges[1].starts_with("bytes=0-")) << ranges[1];
  EXPECT_NE(ranges[1], ranges[0]);
}

TEST_F(HubClientTest, ServersThatIgnoreRangeAreCutOff) {
  HubClient client(settings());
  Result<CheckpointSummary> c = checkpoint_of(client, "tiny-org/no-range");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->stats.elements, kTinyParams);
}

TEST_F(HubClientTest, NoSafetensorsIsAReasonNotACrash) {
  HubClient client(settings());
  Result<CheckpointSummary> c = checkpoint_of(client, "tiny-org/no-weights");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(contains(c.error().reason, "no safetensors weights")) << c.error().reason;
}

TEST_F(HubClientTest, GatedCheckpointHeadersKeepTheTokenOffTheCdn) {
  HubClient client(with_token("hf_fixture_valid_token"));
  Result<CheckpointSummary> c = checkpoint_of(client, "gated-org/gated-llama");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->stats.elements, kTinyParams);
  for (const nlohmann::json& r : hub_->log())
    EXPECT_EQ(r["authorization"].is_null(), r["server"] == "cdn") << r.dump();
}

TEST_F(HubClientTest, CheckpointSummariesAreKeptByCommit) {
  HubClient client(settings());
  Result<CheckpointSummary> first = checkpoint_of(client, "tiny-org/tiny-sharded");
  ASSERT_TRUE(first.ok());
  hub_->clear_log();
  HubSettings offline = settings();
  offline.offline = true;
  HubClient later(offline);
  Result<CheckpointSummary> again = later.checkpoint("tiny-org/tiny-sharded", first->commit);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(checkpoint_to_json(*again), checkpoint_to_json(*first));
  EXPECT_TRUE(hub_->log().empty());
}

// Writes a safetensors file of `elements` BF16 zeros in one tensor.
std::string bf16_safetensors(int64_t elements) {
  std::string header = R"({"w":{"dtype":"BF16","shape":[)" + std::to_string(elements) +
                       R"(],"data_offsets":[0,)" + std::to_string(2 * elements) + "]}}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header + std::string(static_cast<size_t>(2 * elements), '\0');
}

TEST_F(HubClientTest, WeightsInTheCacheAreReadLocallyEvenOffline) {
  const std::string commit = "3333333333333333333333333333333333333333";
  const fs::path snapshot = repo_dir("someone/with-weights") / "snapshots" / commit;
  ASSERT_EQ(write_file_atomically(snapshot / "model.safetensors", bf16_safetensors(1000)), "");
  ASSERT_EQ(write_file_atomically(repo_dir("someone/with-weights") / ".no_exist" / commit /
                                      "model.safetensors.index.json",
                                  ""),
            "");
  HubSettings offline = settings();
  offline.offline = true;
  HubClient client(offline);
  Result<CheckpointSummary> c = client.checkpoint("someone/with-weights", commit);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->stats.dtype_elements, (std::map<std::string, int64_t>{{"BF16", 1000}}));
  EXPECT_EQ(c->total_bytes, 2000);
}

TEST_F(HubClientTest, OfflineWithOnlyTheIndexGivesItsTotalSize) {
  HubClient online(settings());
  Result<FetchedFile> config = online.fetch_config(model_ref("tiny-org/tiny-sharded"));
  ASSERT_TRUE(config.ok());
  const ModelRef pinned{"tiny-org/tiny-sharded", config->commit, true};
  ASSERT_TRUE(std::holds_alternative<FetchedFile>(
      online.fetch_json(pinned, "model.safetensors.index.json")));
  HubSettings offline = settings();
  offline.offline = true;
  HubClient client(offline);
  Result<CheckpointSummary> c = client.checkpoint("tiny-org/tiny-sharded", config->commit);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_FALSE(c->dtypes_known);
  EXPECT_EQ(c->total_bytes, 2 * (kTinyParams - 320) + 4 * 320);
  EXPECT_TRUE(contains(c->source, "HF_HUB_OFFLINE")) << c->source;
}

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
