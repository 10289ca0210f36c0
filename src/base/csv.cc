#include "base/csv.h"

#include <optional>
#include <string>

namespace vramplan {
namespace {

// Splits one line into cells (RFC 4180 quoting within the line: a cell in double quotes may hold
// commas, and "" inside it is one quote). nullopt when a quote is not closed on the line or a
// closing quote is followed by anything but a comma.
std::optional<std::vector<std::string>> split_line(std::string_view line) {
  std::vector<std::string> cells;
  size_t i = 0;
  while (true) {
    std::string cell;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) return std::nullopt;  // unclosed
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        cell += line[i++];
      }
      if (i < line.size() && line[i] != ',') return std::nullopt;
    } else {
      const size_t comma = line.find(',', i);
      const size_t end = comma == std::string_view::npos ? line.size() : comma;
      cell = std::string(line.substr(i, end - i));
      if (cell.find('"') != std::string::npos) return std::nullopt;  // a quote inside a bare cell
      i = end;
    }
    cells.push_back(std::move(cell));
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return cells;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace

const std::string& CsvRow::operator[](const std::string& column) const {
  static const std::string kEmpty;
  auto it = cells.find(column);
  return it == cells.end() ? kEmpty : it->second;
}

Result<std::vector<CsvRow>> parse_csv(std::string_view text, std::string_view name) {
  const std::vector<std::string_view> lines = lines_of(text);
  if (lines.empty()) return Error{std::string(name), "empty", "a CSV file with a header line", ""};
  std::vector<std::vector<std::string>> split;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::optional<std::vector<std::string>> cells = split_line(lines[i]);
    if (!cells)
      return Error{std::string(name), "line " + std::to_string(i + 1),
                   "cells separated by commas, a cell with commas or quotes in double quotes "
                   "(\"\" for a quote) closed on its line",
                   ""};
    split.push_back(std::move(*cells));
  }
  const std::vector<std::string>& header = split.front();
  std::vector<CsvRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string>& cells = split[i];
    if (cells.size() != header.size())
      return Error{std::string(name), "line " + std::to_string(i + 1),
                   std::to_string(header.size()) + " cells like the header",
                   "it has " + std::to_string(cells.size())};
    CsvRow row;
    for (size_t c = 0; c < header.size(); ++c) row.cells[header[c]] = std::move(cells[c]);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace vramplan
