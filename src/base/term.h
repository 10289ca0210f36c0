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
// Ceiling division for positive operands.
inline constexpr Wide ceil_div(Wide a, Wide b) { return (a + b - 1) / b; }

}  // namespace vramplan
