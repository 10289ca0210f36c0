// The values of vLLM's and SGLang's flags in vramplan's words: human-readable token counts
// ("32k"), model dtypes ("half") and KV cache dtypes ("fp8_e4m3"). Errors name the flag as the
// user wrote it, the value and what is accepted.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/serving/inference.h"

namespace vramplan::interop {

// vllm/engine/arg_utils.py human_readable_int (SGLang's is the same): "1k" = 1,000, "1K" = 1,024,
// "25.6k" = 25,600; decimals only with the decimal suffixes k, m, g.
Result<int64_t> human_readable_int(const std::string& key, const std::string& text);

// A plain integer ("8"); errors name `key`.
Result<int64_t> plain_int(const std::string& key, const std::string& text);

// A number ("0.9").
Result<double> plain_number(const std::string& key, const std::string& text);

// --dtype: auto, half, float16, bfloat16, float, float32 -> vramplan's dtype setting.
Result<std::string> model_dtype(const std::string& key, const std::string& text);

struct KvDtypeRead {
  std::string setting;  // vramplan's kv_dtype: auto, bf16, fp16, fp8, int8, int4
  std::string caveat;   // what the mapping leaves out ("" when exact)
};

// --kv-cache-dtype as the engine names it (vllm/config/cache.py CacheDType; SGLang
// server_args.py kv_cache_dtype choices).
Result<KvDtypeRead> kv_cache_dtype(ServingEngine engine, const std::string& key,
                                   const std::string& text);

// vramplan's dtype names as the engines write them ("bf16" -> "bfloat16").
std::string engine_dtype_name(const std::string& vramplan_name);

}  // namespace vramplan::interop
