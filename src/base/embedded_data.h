// Files from data/ compiled into the program (see cmake/embed.cmake).
#pragma once

#include <span>
#include <string_view>

namespace vramplan {

struct EmbeddedFile {
  const char* path;  // relative to data/, e.g. "models/Llama-3.1-8B.json"
  const char* data;
  std::size_t size;
  std::string_view text() const { return {data, size}; }
};

std::span<const EmbeddedFile> embedded_files();

// The text of the embedded file at `path` (relative to data/), or empty when there is none.
inline std::string_view embedded_file(std::string_view path) {
  for (const EmbeddedFile& f : embedded_files())
    if (path == f.path) return f.text();
  return {};
}
}  // namespace vramplan
