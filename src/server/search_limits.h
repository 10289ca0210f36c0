// What one client may take of the server (docs/server.md, "Limits"): planner searches are the
// only requests that run for seconds on several threads, so at most max_searches run at once
// (as many more wait up to queue_seconds for a slot; the rest, and those whose wait ran out, are
// answered 429 with Retry-After, on a connection the server then closes),
// each within a time budget (503 past it), and each stops when its client goes away. Every other
// request (health, options, estimates) keeps the worker threads the searches leave free, so it
// answers in milliseconds while searches run.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "server/api.h"

namespace vramplan::server {

struct ServerLimits {
  int max_searches = 0;        // searches at once; 0: max(1, hardware threads / 4)
  double search_seconds = 30;  // wall-clock budget of one search
  // How long a search waits for a slot before 429. A browser that replaces its search aborts the
  // old request and sends the new one at once; the old search notices its client is gone only at
  // its next check, so without a short wait the replacement would be refused.
  double queue_seconds = 5;
  int retry_after_seconds = 2;  // what a refused client is told to wait
};

// The limits in force; set once by `vramplan serve` before it listens (tests may set them
// between requests). Values out of range are the serve command's to refuse.
void configure_limits(const ServerLimits& limits);
ServerLimits current_limits();  // max_searches resolved (never 0)

// Counters since start, for GET /api/health ("searches").
struct SearchCounters {
  int64_t running = 0;
  int64_t waiting = 0;    // queued for a slot now
  int64_t completed = 0;  // answered, found or not
  int64_t refused = 0;    // 429: every slot stayed taken for queue_seconds
  int64_t timed_out = 0;  // 503: past the budget
  int64_t cancelled = 0;  // the client went away mid-search
};
SearchCounters search_counters();

// One of the max_searches slots, held for the life of the object.
class SearchSlot {
 public:
  // A slot, or nullopt when all are taken (counted as refused).
  static std::optional<SearchSlot> try_take();
  // A slot, waiting up to queue_seconds for one to free (at most max_searches wait at once; more
  // are refused at once); nullopt when none freed (counted as refused) or when `client_gone`
  // says the client stopped waiting (not counted).
  static std::optional<SearchSlot> take(const std::function<bool()>& client_gone);
  SearchSlot(SearchSlot&& other) noexcept;
  SearchSlot& operator=(SearchSlot&&) = delete;
  ~SearchSlot();

  // How the search held by this slot ended (for the counters); completed unless said otherwise.
  void timed_out() { outcome_ = Outcome::kTimedOut; }
  void cancelled() { outcome_ = Outcome::kCancelled; }

 private:
  enum class Outcome { kCompleted, kTimedOut, kCancelled };
  SearchSlot() = default;
  bool held_ = false;
  Outcome outcome_ = Outcome::kCompleted;
};

// Watches one search from the request that started it: should_stop() turns true past the
// server's budget or once the client has gone away.
class SearchWatch {
 public:
  explicit SearchWatch(const Request& request);
  SearchWatch(const SearchWatch&) = delete;
  SearchWatch& operator=(const SearchWatch&) = delete;
  // For the search's should_stop hook; it refers to this watch, which must outlive the search.
  std::function<bool()> should_stop();
  double budget_seconds() const { return budget_; }
  // After the search: 499 when the client went away, 503 with `timeout` past the budget (the
  // slot counts either), nullopt when the search ended by itself.
  std::optional<Response> interrupted(SearchSlot& slot, const char* endpoint,
                                      const Error& timeout) const;

 private:
  const Request& request_;
  double budget_;
  std::chrono::steady_clock::time_point deadline_;
  std::atomic<bool> timed_out_{false}, gone_{false};
};

// 429 {"error": {"field": "request", ...}} with Retry-After and Connection: close.
Response too_many_searches();

}  // namespace vramplan::server
