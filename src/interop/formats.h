// The import formats and how each is recognised and read (formats.cc lists them; each format's
// own file holds its reader).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>

#include "interop/named_files.h"
#include "vramplan/base/error.h"
#include "vramplan/interop/import.h"

namespace vramplan::interop {

// The user's text, parsed each way it parses, once.
struct Document {
  std::string_view text;
  std::optional<nlohmann::json> json;  // a JSON object
  std::optional<nlohmann::json> yaml;  // a YAML mapping (not set when the text is JSON)
  std::optional<nlohmann::json> toml;  // a TOML table
  // The settings given beside the text (an object; they win over what the text says).
  const nlohmann::json* beside = nullptr;
  // The files the text names, given with it.
  NamedFileLookup files;
};

Document read_document(std::string_view text);

struct FormatHandler {
  ImportFormat format;
  bool (*recognises)(const Document& doc);
  Result<Imported> (*read)(const Document& doc);
};

// Every format, in the order detection tries them: the specific ones before the general.
std::span<const FormatHandler> format_handlers();

}  // namespace vramplan::interop
