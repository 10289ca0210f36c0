#include "report/text_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "vramplan/report/report.h"

namespace vramplan {
namespace textfmt {

// Columns a string takes in a terminal: one per code point (the glyphs used here are narrow).
int display_width(std::string_view s) {
  return static_cast<int>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad_right(std::string_view s, int width) {
  return std::string(s) + std::string(std::max(0, width - display_width(s)), ' ');
}

std::string pad_left(std::string_view s, int width) {
  return std::string(std::max(0, width - display_width(s)), ' ') + std::string(s);
}

std::string repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Bytes taken by the first `columns` columns of s.
std::size_t prefix_bytes(std::string_view s, int columns) {
  std::size_t i = 0;
  for (int seen = 0; i < s.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    if (starts_char && ++seen > columns) break;
  }
  return i;
}

// The first `width` columns of s, with "…" when cut.
std::string truncate(std::string_view s, int width) {
  if (display_width(s) <= width) return std::string(s);
  return std::string(s.substr(0, prefix_bytes(s, width - 1))) + "…";
}

// Breaks text into lines of at most `width` columns at spaces; words longer than a line are
// split. Formulas are long, and their numbers must survive.
std::vector<std::string> wrap(std::string_view text, int width) {
  width = std::max(width, 1);
  std::vector<std::string> lines;
  std::string line;
  auto flush = [&] {
    lines.push_back(line);
    line.clear();
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find_first_of(" \t\r\n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    const int needed = display_width(line) + (line.empty() ? 0 : 1) + display_width(word);
    if (!line.empty() && needed > width) flush();
    while (display_width(word) > width) {  // a single word wider than the column
      const std::size_t head = prefix_bytes(word, width);
      lines.emplace_back(word.substr(0, head));
      word.remove_prefix(head);
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty() || lines.empty()) flush();
  return lines;
}

// RFC 4180: a field holding a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Breaks text at spaces into lines of at most `width` columns (long words stay whole).
std::vector<std::string> wrap_at_spaces(std::string_view text, int width) {
  std::vector<std::string> lines;
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
      lines.push_back(line);
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

}  // namespace textfmt

std::string format_bytes(int64_t bytes) {
  // The magnitude in uint64, so that INT64_MIN does not overflow when negated.
  const uint64_t magnitude = bytes < 0 ? 0 - static_cast<uint64_t>(bytes) : bytes;
  const std::string_view sign = bytes < 0 ? "-" : "";
  if (magnitude < 1024) return fmt::format("{}{} B", sign, magnitude);
  static constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(magnitude) / 1024;
  std::size_t unit = 0;
  // Promote when the value would print as 1024.0 of this unit.
  while (unit + 1 < std::size(kUnits) && value >= 1023.95) {
    value /= 1024;
    ++unit;
  }
  // Three or four significant digits: 1.50 GiB, 79.65 GiB, 512.0 MiB.
  if (value < 99.995) return fmt::format("{}{:.2f} {}", sign, value, kUnits[unit]);
  return fmt::format("{}{:.1f} {}", sign, value, kUnits[unit]);
}

}  // namespace vramplan
