#include "vramplan/model/precision.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "base/text.h"

namespace vramplan {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kFp32:
      return "fp32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
    case DType::kFp4:
      return "fp4";
  }
  return "fp32";
}

std::optional<DType> parse_dtype(std::string_view s) {
  const std::string lower = to_lower(s);
  if (lower == "fp32" || lower == "float32" || lower == "float") return DType::kFp32;
  if (lower == "bf16" || lower == "bfloat16") return DType::kBf16;
  if (lower == "fp16" || lower == "float16" || lower == "half") return DType::kFp16;
  if (lower == "fp8" || lower == "float8" || lower == "e4m3" || lower == "e5m2") return DType::kFp8;
  if (lower == "fp4" || lower == "float4" || lower == "nvfp4" || lower == "mxfp4")
    return DType::kFp4;
  return std::nullopt;
}

}  // namespace vramplan
