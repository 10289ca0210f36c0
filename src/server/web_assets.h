// The built web UI (web/dist), compiled into the program by cmake/embed_web.cmake so that
// `vramplan serve` works from any directory.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace vramplan::server {

struct WebAsset {
  const char* path;  // relative to web/dist: "index.html", "assets/index-3f2a.js"
  const char* data;
  std::size_t size;
  std::string_view bytes() const { return {data, size}; }
};

// Every file of web/dist at build time, sorted by path; empty when the UI was not built.
std::span<const WebAsset> web_assets();

}  // namespace vramplan::server
