// Numeric formats and their sizes. Sizes are in bits so that 4-bit formats stay exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace vramplan {

enum class DType { kFp32, kBf16, kFp16, kFp8, kFp4 };

constexpr int64_t bits_of(DType t) {
  switch (t) {
    case DType::kFp32:
      return 32;
    case DType::kBf16:
      return 16;
    case DType::kFp16:
      return 16;
    case DType::kFp8:
      return 8;
    case DType::kFp4:
      return 4;
  }
  return 32;
}

// Bytes of n elements of type t, rounded up to whole bytes.
constexpr int64_t bytes_of(int64_t n, DType t) { return (n * bits_of(t) + 7) / 8; }

std::string_view dtype_name(DType t);                  // "bf16"
std::optional<DType> parse_dtype(std::string_view s);  // case-insensitive; "bfloat16" too
constexpr std::string_view kDTypeChoices = "fp32, bf16, fp16, fp8, fp4";

}  // namespace vramplan
