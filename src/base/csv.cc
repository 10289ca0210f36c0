#include "base/csv.h"

#include <string>

namespace vramplan {
namespace {

std::vector<std::string> split_line(std::string_view line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    cells.emplace_back(
        line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
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
  const std::vector<std::string> header = split_line(lines.front());
  std::vector<CsvRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].find('"') != std::string_view::npos)
      return Error{std::string(name), "line " + std::to_string(i + 1), "unquoted cells",
                   "quoted cells are not supported"};
    std::vector<std::string> cells = split_line(lines[i]);
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
