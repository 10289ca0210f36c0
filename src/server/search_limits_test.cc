#include "server/search_limits.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "server/api.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

const std::string kSearch =
    R"({"model": "Llama-3.1-8B", "gpus": 16, "seq_len": 4096, "global_batch": 64, "threads": 1})";

Request plan_request() {
  Request request;
  request.method = "POST";
  request.path = "/api/plan";
  request.body = kSearch;
  return request;
}

std::string header(const Response& r, const std::string& name) {
  for (const auto& [key, value] : r.headers)
    if (key == name) return value;
  return "";
}

// Restores the default limits after each test.
class SearchLimits : public ::testing::Test {
 protected:
  void TearDown() override { configure_limits({}); }
};

TEST_F(SearchLimits, SearchesBeyondTheLimitAre429WithRetryAfter) {
  configure_limits(
      {.max_searches = 1, .search_seconds = 60, .queue_seconds = 0, .retry_after_seconds = 3});
  const SearchCounters before = search_counters();
  {
    std::optional<SearchSlot> held = SearchSlot::try_take();  // a search in flight
    ASSERT_TRUE(held);
    EXPECT_FALSE(SearchSlot::try_take());
    const Response r = handle_request(plan_request());
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(header(r, "Retry-After"), "3");
    EXPECT_EQ(header(r, "Connection"), "close");
    EXPECT_EQ(json::parse(r.body)["error"]["field"], "request");
  }
  // The slot is free again once the search ends.
  EXPECT_EQ(handle_request(plan_request()).status, 200);
  const SearchCounters after = search_counters();
  EXPECT_EQ(after.refused - before.refused, 2);
  EXPECT_EQ(after.completed - before.completed, 2);
  EXPECT_EQ(after.running, 0);
}

// A browser replacing its search aborts the old request and sends the new one at once; the old
// search frees its slot a moment later, and the new one must get it rather than a 429.
TEST_F(SearchLimits, ASearchWaitsForASlotThatFreesWithinTheQueueTime) {
  configure_limits({.max_searches = 1, .search_seconds = 60, .queue_seconds = 30});
  std::optional<SearchSlot> held = SearchSlot::try_take();
  ASSERT_TRUE(held);
  std::thread release([&held] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    held.reset();
  });
  const Response r = handle_request(plan_request());
  release.join();
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(search_counters().waiting, 0);
}

TEST_F(SearchLimits, OneSearchPerSlotWaitsAndTheRestAreRefusedAtOnce) {
  // An hour's queue: a second waiter that waited would hang this test.
  configure_limits({.max_searches = 1, .search_seconds = 60, .queue_seconds = 3600});
  std::optional<SearchSlot> held = SearchSlot::try_take();
  ASSERT_TRUE(held);
  std::atomic<bool> waited{false};
  std::thread waiter([&waited] { waited = SearchSlot::take({}).has_value(); });
  while (search_counters().waiting == 0) std::this_thread::yield();
  const int64_t refused = search_counters().refused;
  EXPECT_FALSE(SearchSlot::take({}));  // the queue is full: refused without waiting
  EXPECT_EQ(search_counters().refused, refused + 1);
  held.reset();
  waiter.join();
  EXPECT_TRUE(waited.load());
}

TEST_F(SearchLimits, AWaitingSearchWhoseClientWentAwayLeavesTheQueue) {
  configure_limits({.max_searches = 1, .search_seconds = 60, .queue_seconds = 30});
  std::optional<SearchSlot> held = SearchSlot::try_take();
  const int64_t refused = search_counters().refused;
  Request request = plan_request();
  request.client_gone = [] { return true; };
  EXPECT_EQ(handle_request(request).status, 499);
  EXPECT_EQ(search_counters().refused, refused) << "a client that left is not counted refused";
  EXPECT_EQ(search_counters().waiting, 0);
}

TEST_F(SearchLimits, BadRequestsTakeNoSlot) {
  configure_limits({.max_searches = 1});
  std::optional<SearchSlot> held = SearchSlot::try_take();
  Request bad = plan_request();
  bad.body = R"({"model": "Llama-3.1-8B", "gpus": 8192, "global_batch": 64})";
  const Response r = handle_request(bad);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(json::parse(r.body)["error"]["field"], "gpus");
}

TEST_F(SearchLimits, ASearchPastItsBudgetAnswers503NamingTheSearch) {
  configure_limits({.max_searches = 1, .search_seconds = 1e-9});
  const int64_t timed_out = search_counters().timed_out;
  const Response r = handle_request(plan_request());
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(json::parse(r.body)["error"]["field"], "search");
  EXPECT_EQ(search_counters().timed_out, timed_out + 1);
}

TEST_F(SearchLimits, ASearchWhoseClientWentAwayStops) {
  configure_limits({.max_searches = 1, .search_seconds = 60});
  const int64_t cancelled = search_counters().cancelled;
  Request request = plan_request();
  request.client_gone = [] { return true; };
  EXPECT_EQ(handle_request(request).status, 499);
  EXPECT_EQ(search_counters().cancelled, cancelled + 1);
  EXPECT_EQ(search_counters().running, 0);
}

TEST_F(SearchLimits, HealthReportsTheSearches) {
  configure_limits({.max_searches = 2, .search_seconds = 45});
  std::optional<SearchSlot> held = SearchSlot::try_take();
  Request health;
  health.method = "GET";
  health.path = "/api/health";
  const json searches = json::parse(handle_request(health).body)["searches"];
  EXPECT_EQ(searches["running"], 1);
  EXPECT_EQ(searches["limit"], 2);
  EXPECT_EQ(searches["budget_seconds"], 45);
}

}  // namespace
}  // namespace vramplan::server
