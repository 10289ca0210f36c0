#include "server/static_assets.h"

#include <gtest/gtest.h>

#include "server/web_assets.h"

namespace vramplan::server {
namespace {

Response get(const std::string& path) {
  Request request;
  request.method = "GET";
  request.path = path;
  return handle_request(request);
}

std::string header(const Response& r, const std::string& name) {
  for (const auto& [key, value] : r.headers)
    if (key == name) return value;
  return "";
}

TEST(StaticAssets, ContentTypesByExtension) {
  EXPECT_EQ(content_type_for("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(content_type_for("assets/index-3f2a.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(content_type_for("assets/index-3f2a.css"), "text/css; charset=utf-8");
  EXPECT_EQ(content_type_for("logo.svg"), "image/svg+xml");
  EXPECT_EQ(content_type_for("font.woff2"), "font/woff2");
  EXPECT_EQ(content_type_for("blob"), "application/octet-stream");
}

TEST(StaticAssets, EveryEmbeddedFileIsServedWithItsBytes) {
  for (const WebAsset& asset : web_assets()) {
    const Response r = get("/" + std::string(asset.path));
    EXPECT_EQ(r.status, 200) << asset.path;
    EXPECT_EQ(r.body, asset.bytes()) << asset.path;
    EXPECT_EQ(r.content_type, content_type_for(asset.path));
    const bool hashed = std::string(asset.path).starts_with("assets/");
    EXPECT_EQ(header(r, "Cache-Control"),
              hashed ? "public, max-age=31536000, immutable" : "no-cache");
  }
}

TEST(StaticAssets, AppRoutesServeTheIndexAndMissingFilesAre404) {
  const Response root = get("/");
  EXPECT_EQ(root.status, 200);
  EXPECT_EQ(root.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(get("/compare").body, root.body);
  EXPECT_EQ(get("/some/app/route/").body, root.body);
  const Response missing = get("/assets/no-such-file.js");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(get("/favicon-nope.ico").status, 404);
}

TEST(StaticAssets, WithoutTheUiAPageSaysHowToBuildIt) {
  if (web_ui_built()) {
    const WebAsset* index = nullptr;
    for (const WebAsset& a : web_assets())
      if (std::string_view(a.path) == "index.html") index = &a;
    ASSERT_NE(index, nullptr);
    EXPECT_EQ(get("/").body, index->bytes());
  } else {
    EXPECT_NE(get("/").body.find("scripts/build_web.sh"), std::string::npos);
  }
}

}  // namespace
}  // namespace vramplan::server
