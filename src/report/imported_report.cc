#include "vramplan/report/imported_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/text_layout.h"

namespace vramplan {
namespace {

using namespace textfmt;

std::string key_and_value(const std::string& key, const std::string& value) {
  return value.empty() ? key : key + " " + value;
}

// Two columns: the key as written, then what became of it, wrapped to the width left.
void add_lines(std::string& out, const std::string& left, const std::string& right, int width) {
  constexpr int kLeft = 44;
  const std::string shown = truncate(left, kLeft);
  const std::vector<std::string> lines = wrap(right, std::max(20, width - kLeft - 6));
  for (size_t i = 0; i < lines.size(); ++i)
    out += fmt::format("    {}  {}\n", pad_right(i == 0 ? shown : "", kLeft), lines[i]);
}

}  // namespace

std::string render_imported(const Imported& imported, int width) {
  std::string out =
      fmt::format("\nread from {}: {} key{} understood, {} ignored\n", imported.format,
                  imported.understood.size(), imported.understood.size() == 1 ? "" : "s",
                  imported.ignored.size());
  if (!imported.understood.empty()) out += "  understood\n";
  for (const UnderstoodKey& k : imported.understood)
    add_lines(out, key_and_value(k.key, k.value), k.setting, width);
  if (!imported.ignored.empty()) out += "  ignored\n";
  for (const IgnoredKey& k : imported.ignored)
    add_lines(out, key_and_value(k.key, k.value), k.reason, width);
  return out;
}

std::string render_imported_markdown(const Imported& imported) {
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string out = fmt::format("\n## Read from {}\n\n| key | value | became |\n|---|---|---|\n",
                                imported.format);
  for (const UnderstoodKey& k : imported.understood)
    out += fmt::format("| `{}` | `{}` | {} |\n", cell(k.key), cell(k.value), cell(k.setting));
  for (const IgnoredKey& k : imported.ignored)
    out +=
        fmt::format("| `{}` | `{}` | ignored: {} |\n", cell(k.key), cell(k.value), cell(k.reason));
  return out;
}

}  // namespace vramplan
