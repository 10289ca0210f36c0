// Text layout for the reports: terminal columns, padding, wrapping and CSV fields, shared by the
// estimate, serving, roofline and plan reports so that they align and quote alike.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::textfmt {

// Columns a string takes in a terminal: one per code point (the glyphs used here are narrow).
int display_width(std::string_view s);

std::string pad_right(std::string_view s, int width);

std::string pad_left(std::string_view s, int width);

std::string repeat(std::string_view s, int n);

// Bytes taken by the first `columns` columns of s.
std::size_t prefix_bytes(std::string_view s, int columns);

// The first `width` columns of s, with "…" when cut.
std::string truncate(std::string_view s, int width);

// Breaks text into lines of at most `width` columns at spaces; words longer than a line are
// split. Formulas are long, and their numbers must survive.
std::vector<std::string> wrap(std::string_view text, int width);

// Breaks text at spaces into lines of at most `width` columns (long words stay whole).
std::vector<std::string> wrap_at_spaces(std::string_view text, int width);

// RFC 4180: a field holding a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(std::string_view s);

}  // namespace vramplan::textfmt
