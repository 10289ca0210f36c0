#include "hub/cache.h"

#include <gtest/gtest.h>

#include <fstream>

#include "hub/test_fixture_hub.h"

namespace vramplan::hub {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kOtherCommit = "89abcdef0123456789abcdef0123456789abcdef";

std::string read(const fs::path& p) { return read_small_file(p, 1 << 20).value_or("<unreadable>"); }

TEST(HubCacheTest, StoreWritesHuggingfaceHubsLayout) {
  TempDir dir;
  HubCache cache(dir.path());
  const ModelRef ref{"org/name", "main", false};
  auto stored = cache.store(ref, kCommit, "abc123", "config.json", "{\"a\": 1}");
  ASSERT_TRUE(std::holds_alternative<fs::path>(stored)) << std::get<std::string>(stored);
  const fs::path repo = dir.path() / "models--org--name";
  const fs::path pointer = repo / "snapshots" / kCommit / "config.json";
  EXPECT_EQ(std::get<fs::path>(stored), pointer);
  EXPECT_EQ(read(repo / "blobs" / "abc123"), "{\"a\": 1}");
  ASSERT_TRUE(fs::is_symlink(pointer));
  EXPECT_EQ(fs::read_symlink(pointer), fs::path("../../blobs/abc123"));  // relative, as hf does
  EXPECT_EQ(read(pointer), "{\"a\": 1}");
  EXPECT_EQ(read(repo / "refs" / "main"), kCommit);  // no newline, as huggingface_hub writes
  // Nothing half-written is left behind.
  for (const auto& entry : fs::recursive_directory_iterator(repo))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
}

TEST(HubCacheTest, LookupGoesThroughRefsOrTakesACommitDirectly) {
  TempDir dir;
  HubCache cache(dir.path());
  EXPECT_FALSE(cache.commit_for({"org/name", "main", false}));
  cache.store({"org/name", "v1.0", true}, kCommit, "blob1", "config.json", "{}");
  EXPECT_EQ(cache.commit_for({"org/name", "v1.0", true}), kCommit);
  EXPECT_FALSE(cache.commit_for({"org/name", "main", false}));
  EXPECT_EQ(cache.commit_for({"org/name", kOtherCommit, true}), kOtherCommit);
  EXPECT_TRUE(cache.find("org/name", kCommit, "config.json"));
  EXPECT_FALSE(cache.find("org/name", kCommit, "other.json"));
  EXPECT_FALSE(cache.find("org/name", kOtherCommit, "config.json"));
  EXPECT_FALSE(fs::exists(dir.path() / "models--org--name" / "refs" / kCommit));
}

TEST(HubCacheTest, NestedRevisionNamesAreNestedRefs) {
  TempDir dir;
  HubCache cache(dir.path());
  cache.store({"org/name", "refs/pr/1", true}, kCommit, "blob1", "config.json", "{}");
  EXPECT_EQ(read(dir.path() / "models--org--name" / "refs" / "refs" / "pr" / "1"), kCommit);
  EXPECT_EQ(cache.commit_for({"org/name", "refs/pr/1", true}), kCommit);
}

TEST(HubCacheTest, ARefThatIsNotACommitIsIgnored) {
  TempDir dir;
  HubCache cache(dir.path());
  const fs::path ref = dir.path() / "models--org--name" / "refs" / "main";
  ASSERT_EQ(write_file_atomically(ref, "../../../etc\n"), "");
  EXPECT_FALSE(cache.commit_for({"org/name", "main", false}));
  ASSERT_EQ(write_file_atomically(ref, kCommit + "\n"), "");  // a trailing newline is fine
  EXPECT_EQ(cache.commit_for({"org/name", "main", false}), kCommit);
}

TEST(HubCacheTest, MissingFilesAreRemembered) {
  TempDir dir;
  HubCache cache(dir.path());
  cache.record_missing({"org/name", "main", false}, kCommit, "model.safetensors.index.json");
  EXPECT_TRUE(cache.known_missing("org/name", kCommit, "model.safetensors.index.json"));
  EXPECT_TRUE(fs::exists(dir.path() / "models--org--name" / ".no_exist" / kCommit /
                         "model.safetensors.index.json"));
  EXPECT_FALSE(cache.known_missing("org/name", kCommit, "config.json"));
  EXPECT_EQ(cache.commit_for({"org/name", "main", false}), kCommit);
}

TEST(HubCacheTest, SecondRevisionOfTheSameBlobReusesIt) {
  TempDir dir;
  HubCache cache(dir.path());
  cache.store({"org/name", "main", false}, kCommit, "same", "config.json", "{}");
  cache.store({"org/name", "main", false}, kOtherCommit, "same", "config.json", "{}");
  EXPECT_EQ(cache.commit_for({"org/name", "main", false}), kOtherCommit);  // main moved on
  EXPECT_TRUE(cache.find("org/name", kCommit, "config.json"));
  EXPECT_TRUE(cache.find("org/name", kOtherCommit, "config.json"));
}

TEST(HubCacheTest, UnwritableCacheIsAMessageNotACrash) {
  TempDir dir;
  std::ofstream(dir.path() / "file") << "x";
  HubCache cache(dir.path() / "file" / "below-a-file");
  auto stored = cache.store({"org/name", "main", false}, kCommit, "b", "config.json", "{}");
  ASSERT_TRUE(std::holds_alternative<std::string>(stored));
  EXPECT_NE(std::get<std::string>(stored).find("cannot"), std::string::npos);
}

TEST(HubCacheTest, SafeNames) {
  EXPECT_TRUE(is_safe_etag("d3fb25b6733eccff50016b40e588c1fcaf49132d"));
  for (const char* bad : {"", "../x", "a/b", ".hidden", "a..b", "a b", "a\"b"})
    EXPECT_FALSE(is_safe_etag(bad)) << bad;
  EXPECT_TRUE(is_safe_repo_file("config.json"));
  EXPECT_TRUE(is_safe_repo_file("sub/model-00001-of-00002.safetensors"));
  for (const char* bad :
       {"", "/etc/passwd", "../x", "a/../b", "a//b", ".git/config", "a b", "a\\b"})
    EXPECT_FALSE(is_safe_repo_file(bad)) << bad;
}

}  // namespace
}  // namespace vramplan::hub
