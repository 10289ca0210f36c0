#include "base/term.h"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

// The 64-bit shortcut gives the 128-bit quotient, and operands past 64 bits take the 128-bit path.
TEST(Term, DivisionsAgreeWithTheirWideForm) {
  const Wide big = Wide{INT64_MAX};
  const Wide cases[][2] = {{0, 1},       {7, 2},           {8, 2},
                           {big, 1},     {big, big},       {big - 1, big},
                           {big + 1, 2}, {big * 3 + 1, 3}, {Wide{1} << 100, (Wide{1} << 70) + 1},
                           {-7, 2}};
  for (const auto& c : cases) {
    const Wide a = c[0], b = c[1];
    EXPECT_TRUE(divide(a, b) == a / b) << static_cast<double>(a) << " / " << static_cast<double>(b);
    if (a >= 0) {
      EXPECT_TRUE(ceil_div(a, b) == (a + b - 1) / b) << static_cast<double>(a);
    }
  }
  EXPECT_TRUE(ceil_div(7, 2) == 4);
  EXPECT_TRUE(ceil_div(0, 5) == 0);
  EXPECT_TRUE(divide(-7, 2) == -3);  // truncated toward zero, as `/`
}

}  // namespace
}  // namespace vramplan
