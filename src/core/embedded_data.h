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

}  // namespace vramplan
