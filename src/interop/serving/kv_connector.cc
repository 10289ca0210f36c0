#include "interop/serving/kv_connector.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "interop/serving/serving_values.h"

namespace vramplan::interop {
namespace {

// LMCache v1 (lmcache/v1/config.py): local_cpu defaults to true and max_local_cpu_size to 5.0,
// in GiB, for each worker (one per GPU) — the same pool vLLM's --kv-offloading-backend lmcache
// sizes per rank (vllm/config/kv_offloading.py).
constexpr double kLmcacheCpuGib = 5.0;

bool is_lmcache(const std::string& connector) {
  return connector == "LMCacheConnectorV1" || connector == "LMCacheConnector";
}

// LMCACHE_<KEY> overrides the config's <key> (LMCache's config.py reads every key so).
std::optional<std::string> env_of(const ServingCommand& cmd, const char* name) {
  const auto it = cmd.environment.find(name);
  if (it == cmd.environment.end()) return std::nullopt;
  return it->second;
}

bool truthy_text(const std::string& v) { return v == "1" || v == "true" || v == "True"; }

}  // namespace

std::optional<Error> read_kv_transfer_config(const ServingArg& a, ServingState& st,
                                             ImportBuilder& out) {
  const nlohmann::json config = nlohmann::json::parse(a.value, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    return Error{a.written, a.value,
                 "a JSON object: {\"kv_connector\": \"LMCacheConnectorV1\", \"kv_role\": ...}",
                 "vLLM parses --kv-transfer-config as KVTransferConfig's JSON"};
  const auto connector = config.find("kv_connector");
  if (connector == config.end() || !connector->is_string())
    return Error{a.written, a.value, "a JSON object with a \"kv_connector\" name",
                 "vLLM needs the connector's name"};
  const std::string name = connector->get<std::string>();
  if (!is_lmcache(name)) {
    out.unsupported(a.written, a.value,
                    fmt::format("the {} connector's buffers (NIXL and P2P transfers, P/D "
                                "disaggregation, vLLM's OffloadingConnector: give its host size "
                                "as --kv-offloading-size)",
                                name));
    return std::nullopt;
  }
  st.kv_connector.set(name, a.written);
  return std::nullopt;
}

std::optional<Error> finish_kv_connector(const ServingCommand& cmd, ServingState& st,
                                         ImportBuilder& out) {
  const bool lmcache = st.kv_connector.value.has_value();
  for (const auto& [name, value] : cmd.environment) {
    if (name.rfind("LMCACHE_", 0) != 0) continue;
    if (!lmcache) {
      out.ignore(name, value, std::string(kNoMemoryEffect) + ": no LMCache connector is set");
    } else if (name == "LMCACHE_MAX_LOCAL_CPU_SIZE" || name == "LMCACHE_LOCAL_CPU") {
      continue;  // read below
    } else if (name == "LMCACHE_CONFIG_FILE") {
      out.unsupported(name, value,
                      "LMCache's YAML config is not read: give its max_local_cpu_size as "
                      "LMCACHE_MAX_LOCAL_CPU_SIZE (vramplan assumes LMCache's default otherwise)");
    } else if (name == "LMCACHE_LOCAL_DISK" || name == "LMCACHE_MAX_LOCAL_DISK_SIZE" ||
               name == "LMCACHE_REMOTE_URL") {
      out.unsupported(name, value, "LMCache's disk and remote tiers are not modelled");
    } else {
      out.ignore(name, value, std::string(kNoMemoryEffect) + ": an LMCache setting");
    }
  }
  if (!lmcache) return std::nullopt;
  const std::string& key = st.kv_connector.key;
  if (!st.kv_offloading_key.empty())
    return Error{key, *st.kv_connector.value,
                 fmt::format("either {} or an LMCache --kv-transfer-config", st.kv_offloading_key),
                 "vLLM builds its own connector config from --kv-offloading-size"};
  if (const auto local = env_of(cmd, "LMCACHE_LOCAL_CPU"); local && !truthy_text(*local)) {
    out.understood("LMCACHE_LOCAL_CPU", *local,
                   "no local CPU pool: LMCache keeps nothing on the host");
    out.understood(key, *st.kv_connector.value, "LMCache without its local CPU backend");
    return std::nullopt;
  }
  double per_gpu = kLmcacheCpuGib;
  std::string from = fmt::format("LMCache's default max_local_cpu_size {:g} GiB", kLmcacheCpuGib);
  if (const auto size = env_of(cmd, "LMCACHE_MAX_LOCAL_CPU_SIZE")) {
    Result<double> gib = plain_number("LMCACHE_MAX_LOCAL_CPU_SIZE", *size);
    if (!gib) return gib.error();
    per_gpu = *gib;
    from = fmt::format("LMCACHE_MAX_LOCAL_CPU_SIZE {:g} GiB", per_gpu);
    out.understood("LMCACHE_MAX_LOCAL_CPU_SIZE", *size, "GiB of KV chunks per GPU in host memory");
  }
  const int64_t gpus = st.tp.value.value_or(1) * st.pp.value.value_or(1);
  const double total = per_gpu * static_cast<double>(gpus);
  out.put("kv_offload_gib", total, key);
  out.understood(key, *st.kv_connector.value,
                 fmt::format("kv_offload_gib = {:g}: {}'s local CPU pool, {} per GPU × {} GPU{} "
                             "(tp·pp)",
                             total, *st.kv_connector.value, from, gpus, gpus == 1 ? "" : "s"));
  return std::nullopt;
}

}  // namespace vramplan::interop
