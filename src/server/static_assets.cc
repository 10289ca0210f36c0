#include "server/static_assets.h"

#include <string>
#include <unordered_map>

#include "server/web_assets.h"

namespace vramplan::server {
namespace {

// Served in place of the UI when web/dist was missing at build time; the API works regardless.
constexpr std::string_view kNotBuiltPage = R"(<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>vramplan</title>
<style>body{font-family:system-ui,sans-serif;max-width:44rem;margin:3rem auto;line-height:1.5}
code{background:#f2f2f2;padding:0 .25rem}</style></head>
<body>
<h1>vramplan</h1>
<p>The web UI was not built into this program, so there is no page to show here.
The JSON API works: try <a href="/api/health">/api/health</a>,
<a href="/api/models">/api/models</a> or <code>POST /api/estimate</code> (see docs/web-api.md).</p>
<p>To build the UI (needs Node.js 18+ and npm), run from the source tree:</p>
<pre><code>scripts/build_web.sh   # npm ci &amp;&amp; npm run build in web/ -> web/dist
scripts/build.sh       # rebuilds vramplan with web/dist embedded</code></pre>
<p>or simply <code>scripts/run.sh</code>, which does both and starts the server.</p>
</body>
</html>
)";

const std::unordered_map<std::string_view, const WebAsset*>& asset_index() {
  static const auto index = [] {
    std::unordered_map<std::string_view, const WebAsset*> map;
    for (const WebAsset& asset : web_assets()) map.emplace(asset.path, &asset);
    return map;
  }();
  return index;
}

const WebAsset* find_asset(std::string_view relative) {
  const auto& index = asset_index();
  auto it = index.find(relative);
  return it == index.end() ? nullptr : it->second;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The last path segment names a file ("app.js", "favicon.ico") rather than an app route.
bool has_file_extension(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return last.find('.') != std::string_view::npos;
}

Response asset_response(const WebAsset& asset) {
  Response response;
  response.content_type = std::string(content_type_for(asset.path));
  response.body.assign(asset.data, asset.size);
  // Vite puts content-hashed names under assets/: they never change, so cache them for good.
  const bool hashed = std::string_view(asset.path).substr(0, 7) == "assets/";
  response.headers.emplace_back("Cache-Control",
                                hashed ? "public, max-age=31536000, immutable" : "no-cache");
  return response;
}

Response not_built_page() {
  Response response;
  response.content_type = "text/html; charset=utf-8";
  response.body = kNotBuiltPage;
  response.headers.emplace_back("Cache-Control", "no-cache");
  return response;
}

Response not_found(std::string_view path) {
  Response response;
  response.status = 404;
  response.content_type = "text/plain; charset=utf-8";
  response.body = "not found: " + std::string(path) + "\n";
  return response;
}

}  // namespace

bool web_ui_built() { return find_asset("index.html") != nullptr; }

std::string_view content_type_for(std::string_view path) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".webmanifest", "application/manifest+json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".webp", "image/webp"},
      {".ico", "image/x-icon"},
      {".woff", "font/woff"},
      {".woff2", "font/woff2"},
      {".ttf", "font/ttf"},
      {".txt", "text/plain; charset=utf-8"},
      {".wasm", "application/wasm"},
  };
  for (const auto& [extension, type] : kTypes)
    if (ends_with(path, extension)) return type;
  return "application/octet-stream";
}

Response serve_static(std::string_view path) {
  std::string relative(path.substr(path.empty() || path[0] != '/' ? 0 : 1));
  if (relative.empty() || relative.back() == '/') relative += "index.html";
  if (const WebAsset* asset = find_asset(relative)) return asset_response(*asset);
  if (has_file_extension(path)) return not_found(path);
  // An app route such as /compare: the single-page app's index.html handles it.
  if (const WebAsset* index = find_asset("index.html")) return asset_response(*index);
  return not_built_page();
}

}  // namespace vramplan::server
