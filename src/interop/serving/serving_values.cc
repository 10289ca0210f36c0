#include "interop/serving/serving_values.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace vramplan::interop {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

constexpr const char* kHumanInt = "an integer, or one with a suffix: 32k (32,000), 32K (32,768)";

}  // namespace

Result<int64_t> plain_int(const std::string& key, const std::string& text) {
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc() && ptr == text.data() + text.size() && !text.empty()) return out;
  return Error{key, text, "an integer", ""};
}

Result<double> plain_number(const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(d)) return d;
  return Error{key, text, "a number", ""};
}

Result<int64_t> human_readable_int(const std::string& key, const std::string& text) {
  if (text.empty()) return Error{key, text, kHumanInt, ""};
  const char suffix = text.back();
  const std::string number = text.substr(0, text.size() - 1);
  const std::pair<char, double> multipliers[] = {
      {'k', 1e3}, {'m', 1e6}, {'g', 1e9}, {'K', 1024.0}, {'M', 1048576.0}, {'G', 1073741824.0}};
  for (const auto& [s, multiplier] : multipliers) {
    if (suffix != s) continue;
    const bool binary = std::isupper(static_cast<unsigned char>(s)) != 0;
    if (binary) {  // "Decimals are not allowed with binary suffixes"
      Result<int64_t> n = plain_int(key, number);
      if (!n || *n < 0 || *n > (int64_t{1} << 32))
        return Error{key, text, kHumanInt, "a binary suffix takes a whole number"};
      return *n * static_cast<int64_t>(multiplier);
    }
    Result<double> d = plain_number(key, number);
    if (!d || *d < 0 || *d > 1e12) return Error{key, text, kHumanInt, ""};
    return static_cast<int64_t>(*d * multiplier);
  }
  Result<int64_t> n = plain_int(key, text);
  if (!n) return Error{key, text, kHumanInt, ""};
  return n;
}

Result<std::string> model_dtype(const std::string& key, const std::string& text) {
  const std::string t = lower(text);
  if (t == "auto") return std::string("auto");
  if (t == "half" || t == "float16") return std::string("fp16");
  if (t == "bfloat16") return std::string("bf16");
  if (t == "float" || t == "float32") return std::string("fp32");
  return Error{key, text, "auto, half, float16, bfloat16, float, float32", ""};
}

Result<KvDtypeRead> kv_cache_dtype(ServingEngine engine, const std::string& key,
                                   const std::string& text) {
  const std::string t = lower(text);
  if (t == "auto") return KvDtypeRead{"auto", ""};
  if (t == "bfloat16" || t == "bf16") return KvDtypeRead{"bf16", ""};
  if (engine == ServingEngine::kVllm) {
    // vllm/config/cache.py CacheDType.
    if (t == "float16") return KvDtypeRead{"fp16", ""};
    if (t == "fp8" || t == "fp8_e4m3" || t == "fp8_e5m2" || t == "fp8_inc")
      return KvDtypeRead{"fp8", ""};
    if (t == "fp8_ds_mla" || t == "fp8_per_token_head")
      return KvDtypeRead{"fp8", "its scales beside the fp8 elements are not counted"};
    if (t == "int8_per_token_head")
      return KvDtypeRead{"int8", "its per-token-head scales are not counted"};
    if (t == "int4_per_token_head")
      return KvDtypeRead{"int4", "its per-token-head scales are not counted"};
    return Error{key, text,
                 "auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla, "
                 "fp8_per_token_head, int8_per_token_head, int4_per_token_head",
                 "vramplan has no KV cache format for it"};
  }
  // SGLang server_args.py kv_cache_dtype.
  if (t == "fp8_e4m3" || t == "fp8_e5m2") return KvDtypeRead{"fp8", ""};
  if (t == "mxfp8") return KvDtypeRead{"fp8", "its block scales are not counted"};
  if (t == "fp4_e2m1" || t == "nvfp4" || t == "fp4_mx_block16")
    return KvDtypeRead{"int4", "counted as 4 bits per element; its block scales are not"};
  return Error{key, text,
               "auto, bf16, bfloat16, fp8_e4m3, fp8_e5m2, mxfp8, fp4_e2m1, nvfp4, fp4_mx_block16",
               ""};
}

std::string engine_dtype_name(const std::string& name) {
  if (name == "bf16") return "bfloat16";
  if (name == "fp16") return "float16";
  if (name == "fp32") return "float32";
  return name;
}

}  // namespace vramplan::interop
