// The checkpoint behind a Hub model: its stored size and dtypes from safetensors headers.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "hub/hub_client.h"
#include "hub/test_hub_client.h"

namespace vramplan::hub {
namespace {

namespace fs = std::filesystem;
using namespace testing;

// --- checkpoint: stored size and dtypes -------------------------------------------------------

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

}  // namespace
}  // namespace vramplan::hub
