// A computed memory term: its bytes and, when asked for, the formula with values filled in.
// Byte arithmetic runs in 128 bits so that absurd inputs are caught instead of wrapping.
#pragma once

#include <cstdint>
#include <string>

namespace vramplan {

using Wide = __int128;

// Largest byte count a row may hold; beyond it the scenario is reported as overflowing.
inline constexpr Wide kMaxBytes = Wide{1} << 62;

struct Term {
  Wide bytes = 0;
  std::string formula;  // empty when explanations are off
};

// 8030261248 -> "8,030,261,248"
std::string group_digits(Wide n);
// Bytes as a short human figure for formulas: "1.50 GiB".
std::string short_bytes(Wide bytes);
// Operands that fit 64 bits divide in 64 bits: the same quotient, without the library call a
// 128-bit division is (the planner divides for every layout it decides).
inline constexpr bool fits_int64(Wide a, Wide b) {
  return a >= 0 && b > 0 && a <= INT64_MAX && b <= INT64_MAX;
}
// a / b, truncated. REQUIRES: b != 0.
inline constexpr Wide divide(Wide a, Wide b) {
  return fits_int64(a, b) ? Wide{static_cast<int64_t>(a) / static_cast<int64_t>(b)} : a / b;
}
// Ceiling division for positive operands.
inline constexpr Wide ceil_div(Wide a, Wide b) {
  if (fits_int64(a, b)) {
    const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
    return x / y + (x % y != 0);
  }
  return (a + b - 1) / b;
}

}  // namespace vramplan
