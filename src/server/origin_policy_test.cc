#include "server/origin_policy.h"

#include <gtest/gtest.h>

namespace vramplan::server {
namespace {

RequestOrigin post(std::string origin, std::string host, std::string site = "") {
  return {"POST", std::move(origin), std::move(host), std::move(site)};
}

TEST(OriginPolicy, TheServersOwnPagesMayWrite) {
  EXPECT_FALSE(refuse_cross_origin(post("http://127.0.0.1:8080", "127.0.0.1:8080")));
  EXPECT_FALSE(refuse_cross_origin(post("http://[::1]:8080", "[::1]:8080")));
  // Host names compare without case, and port 80 may be left out on either side.
  EXPECT_FALSE(refuse_cross_origin(post("http://Plan.Example.com", "plan.example.com:80")));
  EXPECT_FALSE(refuse_cross_origin(post("http://plan.example.com:80", "plan.example.com")));
  // Behind a proxy that ends TLS and keeps the Host header.
  EXPECT_FALSE(refuse_cross_origin(post("https://plan.example.com", "plan.example.com")));
  EXPECT_FALSE(refuse_cross_origin(post("https://plan.example.com", "plan.example.com:443")));
}

TEST(OriginPolicy, ClientsWithoutAnOriginMayWrite) {
  EXPECT_FALSE(refuse_cross_origin(post("", "127.0.0.1:8080")));  // curl, Python
  EXPECT_FALSE(refuse_cross_origin(post("", "127.0.0.1:8080", "same-origin")));
  EXPECT_FALSE(refuse_cross_origin(post("", "127.0.0.1:8080", "none")));  // typed by the user
}

TEST(OriginPolicy, PagesOfOtherOriginsMayNotWrite) {
  for (const char* origin :
       {"http://evil.example", "http://127.0.0.1:3000", "null", "http://127.0.0.1:8080/path",
        "file://", "http://127.0.0.1", "https://127.0.0.1", "http://127.0.0.1:8080.evil.example",
        "http://evil.example/127.0.0.1:8080"}) {
    const std::optional<Error> refused = refuse_cross_origin(post(origin, "127.0.0.1:8080"));
    ASSERT_TRUE(refused) << origin;
    EXPECT_EQ(refused->field, "origin");
    EXPECT_EQ(refused->value, origin);
    EXPECT_NE(refused->accepted.find("http://127.0.0.1:8080"), std::string::npos);
  }
  // A browser that sent no Origin but says the request is another site's.
  const std::optional<Error> refused =
      refuse_cross_origin(post("", "127.0.0.1:8080", "cross-site"));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->value, "Sec-Fetch-Site: cross-site");
  EXPECT_TRUE(refuse_cross_origin(post("", "127.0.0.1:8080", "same-site")));
}

TEST(OriginPolicy, ReadsFromAnywhereAreServed) {
  for (const char* method : {"GET", "HEAD", "OPTIONS"})
    EXPECT_FALSE(refuse_cross_origin({method, "http://evil.example", "127.0.0.1:8080", ""}));
  for (const char* method : {"PUT", "PATCH", "DELETE"})
    EXPECT_TRUE(refuse_cross_origin({method, "http://evil.example", "127.0.0.1:8080", ""}));
}

TEST(OriginPolicy, EveryAnswerCarriesAContentSecurityPolicy) {
  bool csp = false, frames = false;
  for (const auto& [name, value] : security_headers()) {
    if (name == "Content-Security-Policy") {
      csp = true;
      EXPECT_NE(value.find("script-src 'self'"), std::string::npos);
      EXPECT_EQ(value.find("unsafe"), std::string::npos) << "no inline script or style";
    }
    if (name == "X-Frame-Options") frames = value == "DENY";
  }
  EXPECT_TRUE(csp);
  EXPECT_TRUE(frames);
}

}  // namespace
}  // namespace vramplan::server
