#include "base/term.h"

#include <fmt/format.h>

namespace vramplan {

std::string group_digits(Wide n) {
  const bool negative = n < 0;
  if (negative) n = -n;
  std::string digits;
  int count = 0;
  do {
    if (count > 0 && count % 3 == 0) digits.insert(digits.begin(), ',');
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(n % 10)));
    n /= 10;
    ++count;
  } while (n > 0);
  return negative ? "-" + digits : digits;
}

std::string short_bytes(Wide bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", static_cast<int64_t>(bytes));
}

}  // namespace vramplan
