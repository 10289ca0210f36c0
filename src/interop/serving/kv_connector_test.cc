// vLLM's --kv-transfer-config with LMCache's connector: its local CPU pool as the KV offload.
#include "interop/serving/kv_connector.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "vramplan/interop/import.h"

namespace vramplan {
namespace {

constexpr const char* kLmcache =
    R"( --kv-transfer-config '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}')";

Imported import_ok(const std::string& text) {
  Result<Imported> i = import_config(text, "vllm");
  EXPECT_TRUE(i.ok()) << i.error().message();
  return i.ok() ? *i : Imported{};
}

bool listed(const std::vector<UnderstoodKey>& keys, const std::string& key,
            const std::string& text) {
  return std::any_of(keys.begin(), keys.end(), [&](const UnderstoodKey& k) {
    return k.key == key && k.setting.find(text) != std::string::npos;
  });
}

bool ignored_as(const Imported& i, const std::string& key, const std::string& reason) {
  return std::any_of(i.ignored.begin(), i.ignored.end(), [&](const IgnoredKey& k) {
    return k.key == key && k.reason.find(reason) != std::string::npos;
  });
}

// LMCache's default: 5 GiB of local CPU pool on each worker (lmcache/v1/config.py), one worker
// per GPU of tp·pp.
TEST(KvConnector, LmcacheDefaultPoolPerGpu) {
  const Imported i = import_ok(std::string("vllm serve Qwen/Qwen3-8B -tp 2") + kLmcache + "\n");
  EXPECT_EQ(i.settings.at("kv_offload_gib"), 10.0);
  EXPECT_TRUE(listed(i.understood, "--kv-transfer-config", "default max_local_cpu_size 5 GiB"));
}

TEST(KvConnector, LmcacheSizeFromTheEnvironment) {
  const Imported i = import_ok(std::string("LMCACHE_MAX_LOCAL_CPU_SIZE=20 LMCACHE_CHUNK_SIZE=256 "
                                           "vllm serve Qwen/Qwen3-8B -tp 2 -pp 2") +
                               kLmcache + "\n");
  EXPECT_EQ(i.settings.at("kv_offload_gib"), 80.0);
  EXPECT_TRUE(listed(i.understood, "LMCACHE_MAX_LOCAL_CPU_SIZE", "per GPU"));
  EXPECT_TRUE(ignored_as(i, "LMCACHE_CHUNK_SIZE", "no effect on memory"));
}

TEST(KvConnector, LmcacheWithoutItsCpuBackendKeepsNothingOnTheHost) {
  const Imported i =
      import_ok(std::string("LMCACHE_LOCAL_CPU=False vllm serve Qwen/Qwen3-8B") + kLmcache + "\n");
  EXPECT_FALSE(i.settings.contains("kv_offload_gib"));
  EXPECT_TRUE(listed(i.understood, "LMCACHE_LOCAL_CPU", "no local CPU pool"));
}

TEST(KvConnector, OtherConnectorsAndTiersAreNotModelledAndSaySo) {
  const Imported nixl = import_ok(
      R"(vllm serve Qwen/Qwen3-8B --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}')"
      "\n");
  EXPECT_FALSE(nixl.settings.contains("kv_offload_gib"));
  EXPECT_TRUE(ignored_as(nixl, "--kv-transfer-config", "NixlConnector"));
  EXPECT_FALSE(nixl.warnings.empty());
  const Imported disk = import_ok(
      std::string("LMCACHE_LOCAL_DISK=file:///tmp/lm vllm serve Qwen/Qwen3-8B") + kLmcache + "\n");
  EXPECT_TRUE(ignored_as(disk, "LMCACHE_LOCAL_DISK", "disk and remote tiers"));
  const Imported unused = import_ok("LMCACHE_MAX_LOCAL_CPU_SIZE=8 vllm serve Qwen/Qwen3-8B\n");
  EXPECT_TRUE(ignored_as(unused, "LMCACHE_MAX_LOCAL_CPU_SIZE", "no LMCache connector"));
}

TEST(KvConnector, BadConfigsAndConflictsAreErrorsNamingTheFlag) {
  Result<Imported> bad =
      import_config("vllm serve Qwen/Qwen3-8B --kv-transfer-config 'not json'\n", "vllm");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "--kv-transfer-config");
  Result<Imported> both = import_config(
      std::string("vllm serve Qwen/Qwen3-8B --kv-offloading-size 16") + kLmcache + "\n", "vllm");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().field, "--kv-transfer-config");
  Result<Imported> size = import_config(
      std::string("LMCACHE_MAX_LOCAL_CPU_SIZE=lots vllm serve Qwen/Qwen3-8B") + kLmcache + "\n",
      "vllm");
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.error().field, "LMCACHE_MAX_LOCAL_CPU_SIZE");
}

}  // namespace
}  // namespace vramplan
