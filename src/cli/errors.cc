#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "vramplan/interop/emit.h"
#include "vramplan/io/options.h"

namespace vramplan::cli {

int report_error(const Error& error,
                 std::initializer_list<std::span<const OptionSpec>> registries) {
  Error shown = error;
  for (std::span<const OptionSpec> options : registries) {
    const OptionSpec* o = find_option(options, shown.field);
    if (o != nullptr && o->kind != OptionKind::kObject) {
      shown.field = flag_name(o->key);
      break;
    }
  }
  std::cerr << "vramplan: error: " << shown.message() << "\n";
  return kExitBadInput;
}

Result<std::string> read_text_file(const std::string& path, const std::string& field) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Error{field, path, "a readable file", "it is a directory"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{field, path, "a readable file", "cannot open it"};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{field, path, "a readable file", "reading it failed"};
  return text.str();
}

Result<std::string> read_standard_input(const std::string& field) {
  constexpr size_t kMax = 16 << 20;
  std::string text;
  char buffer[1 << 16];
  while (std::cin.read(buffer, sizeof buffer) || std::cin.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(std::cin.gcount()));
    if (text.size() > kMax) return Error{field, "-", "at most 16 MiB on standard input", ""};
  }
  return text;
}

std::string emit_format_names(ImportKind kind) {
  std::string names;
  for (const EmitFormat& f : emit_formats())
    if (f.kind == kind) names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names.empty() ? "none yet" : names;
}

int report_emit_error(Error error) {
  if (error.field == "emit") error.field = "--emit";
  return report_error(error);
}

}  // namespace vramplan::cli
