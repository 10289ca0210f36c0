#include "server/api.h"

#include <gtest/gtest.h>

namespace vramplan::server {
namespace {

Response get(const std::string& path) {
  Request request;
  request.method = "GET";
  request.path = path;
  return handle_request(request);
}

TEST(Api, HealthSaysOk) {
  const Response r = get("/api/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"], "ok");
}

}  // namespace
}  // namespace vramplan::server
