#include "hub/http.h"

#include <gtest/gtest.h>

namespace vramplan::hub {
namespace {

TEST(HttpTest, OriginIsSchemeHostAndPort) {
  EXPECT_EQ(url_origin("https://huggingface.co/a/b"), "https://huggingface.co:443");
  EXPECT_EQ(url_origin("https://HuggingFace.co:443/x"), "https://huggingface.co:443");
  EXPECT_EQ(url_origin("http://127.0.0.1:8080/x?y"), "http://127.0.0.1:8080");
  EXPECT_EQ(url_origin("http://h/x"), "http://h:80");
  EXPECT_EQ(url_origin("ftp://h/x"), "");
  EXPECT_EQ(url_origin("not a url"), "");
  // Same host, other port or scheme: a different origin, so no token.
  EXPECT_NE(url_origin("http://127.0.0.1:1/"), url_origin("http://127.0.0.1:2/"));
  EXPECT_NE(url_origin("http://h/"), url_origin("https://h/"));
}

TEST(HttpTest, LocationResolvesAgainstTheAnsweringUrl) {
  const std::string base = "https://huggingface.co/old/name/resolve/main/config.json";
  EXPECT_EQ(resolve_location(base, "/new/name/resolve/main/config.json"),
            "https://huggingface.co/new/name/resolve/main/config.json");
  EXPECT_EQ(resolve_location(base, "https://cdn-lfs.hf.co/repos/ab/cd?x=1"),
            "https://cdn-lfs.hf.co/repos/ab/cd?x=1");
  EXPECT_EQ(resolve_location(base, "file:///etc/passwd"), "");
  EXPECT_EQ(resolve_location(base, "ftp://x/y"), "");
  EXPECT_EQ(resolve_location(base, ""), "");
}

TEST(HttpTest, RevisionIsOneEncodedPathSegment) {
  EXPECT_EQ(url_encode_segment("refs/pr/1"), "refs%2Fpr%2F1");
  EXPECT_EQ(url_encode_segment("v1.0-rc_2~x"), "v1.0-rc_2~x");
  EXPECT_EQ(url_encode_segment("a b"), "a%20b");
}

TEST(HttpTest, UnreachableHostIsAConnectFailure) {
  HttpClient http;
  HttpRequest request;
  request.url = "http://127.0.0.1:1/x";  // port 1: nothing listens
  request.total_timeout_s = 5;
  HttpOutcome outcome = http.get(request);
  ASSERT_TRUE(std::holds_alternative<TransportError>(outcome));
  EXPECT_EQ(std::get<TransportError>(outcome).kind, TransportFailure::kConnect);
}

}  // namespace
}  // namespace vramplan::hub
