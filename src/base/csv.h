// A small reader for the comma-separated measurement tables (no quoted fields: the files we
// ship have none, and a quote is reported as an error rather than misread).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"

namespace vramplan {

struct CsvRow {
  std::map<std::string, std::string> cells;  // column name -> text ("" when empty)
  const std::string& operator[](const std::string& column) const;  // "" for unknown columns
};

// Parses a header line and data lines; every line must have as many cells as the header.
Result<std::vector<CsvRow>> parse_csv(std::string_view text, std::string_view name);

}  // namespace vramplan
