// vLLM's KV connector (--kv-transfer-config): LMCache's connector keeps a local CPU pool of KV
// chunks on every worker, a host tier behind the GPU's KV cache (docs/offload.md "Serving").
#pragma once

#include <optional>

#include "interop/serving/serving_args.h"
#include "interop/serving/serving_command.h"
#include "interop/serving/serving_importer.h"

namespace vramplan::interop {

// Reads the connector's JSON: LMCache (LMCacheConnectorV1, LMCacheConnector) is remembered in
// `st` for finish_kv_connector; other connectors are listed as not modelled.
std::optional<Error> read_kv_transfer_config(const ServingArg& a, ServingState& st,
                                             ImportBuilder& out);

// After every flag: LMCache's local CPU backend as kv_offload_gib (its size per worker × tp·pp),
// from the LMCACHE_* environment variables or LMCache's defaults; the LMCACHE_* variables listed.
std::optional<Error> finish_kv_connector(const ServingCommand& cmd, ServingState& st,
                                         ImportBuilder& out);

}  // namespace vramplan::interop
