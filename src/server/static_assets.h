// Serving the embedded web UI: files by path, index.html for the app's own routes (a single-page
// app), and a built-in page explaining how to build the UI when it was not built.
#pragma once

#include <string_view>

#include "server/api.h"

namespace vramplan::server {

// True when web/dist was embedded (index.html present).
bool web_ui_built();

// GET of a non-API path: the file, index.html for paths without a file extension (the app's
// routes), 404 for a missing file. Sets Content-Type by extension and Cache-Control: hashed
// files under assets/ are immutable, everything else is revalidated.
Response serve_static(std::string_view path);

// "text/html; charset=utf-8" for "index.html", "application/octet-stream" when unknown.
std::string_view content_type_for(std::string_view path);

}  // namespace vramplan::server
