#include "server/search_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "server/plan.h"

namespace vramplan::server {
namespace {

std::mutex mutex;
std::condition_variable slot_freed;
ServerLimits limits;
SearchCounters counters;

int resolved_max_searches(const ServerLimits& l) {
  if (l.max_searches > 0) return l.max_searches;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / kMaxPlanThreads);
}

}  // namespace

void configure_limits(const ServerLimits& l) {
  std::lock_guard lock(mutex);
  limits = l;
}

ServerLimits current_limits() {
  std::lock_guard lock(mutex);
  ServerLimits l = limits;
  l.max_searches = resolved_max_searches(l);
  return l;
}

SearchCounters search_counters() {
  std::lock_guard lock(mutex);
  return counters;
}

std::optional<SearchSlot> SearchSlot::try_take() {
  std::lock_guard lock(mutex);
  if (counters.running >= resolved_max_searches(limits)) {
    ++counters.refused;
    return std::nullopt;
  }
  ++counters.running;
  SearchSlot slot;
  slot.held_ = true;
  return slot;
}

std::optional<SearchSlot> SearchSlot::take(const std::function<bool()>& client_gone) {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mutex);
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(0.0, limits.queue_seconds)));
  // One waiter per slot at most (a replacement for each running search): waiters hold worker
  // threads, and health must keep free ones while a flood of searches arrives.
  if (counters.running >= resolved_max_searches(limits) &&
      counters.waiting >= resolved_max_searches(limits)) {
    ++counters.refused;
    return std::nullopt;
  }
  ++counters.waiting;
  bool gone = false;
  // Wakes when a slot frees, and every 50 ms to see whether the waiting client went away.
  while (counters.running >= resolved_max_searches(limits) && Clock::now() < deadline) {
    slot_freed.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
    if (client_gone && client_gone()) {
      gone = true;
      break;
    }
  }
  --counters.waiting;
  if (gone) return std::nullopt;
  if (counters.running >= resolved_max_searches(limits)) {
    ++counters.refused;
    return std::nullopt;
  }
  ++counters.running;
  SearchSlot slot;
  slot.held_ = true;
  return slot;
}

SearchSlot::SearchSlot(SearchSlot&& other) noexcept : held_(other.held_), outcome_(other.outcome_) {
  other.held_ = false;
}

SearchSlot::~SearchSlot() {
  if (!held_) return;
  std::lock_guard lock(mutex);
  --counters.running;
  slot_freed.notify_one();
  switch (outcome_) {
    case Outcome::kTimedOut:
      ++counters.timed_out;
      break;
    case Outcome::kCancelled:
      ++counters.cancelled;
      break;
    default:
      ++counters.completed;
      break;
  }
}

Response too_many_searches() {
  const ServerLimits l = current_limits();
  Response response = error_response(
      {"request", "POST /api/plan",
       fmt::format("at most {} layout search{} at once on this server", l.max_searches,
                   l.max_searches == 1 ? "" : "es"),
       fmt::format("every search slot is taken (a search waits up to {:g} s for one, as many "
                   "at once as there are slots); retry in {} s (vramplan serve --max-searches "
                   "and --search-queue-seconds set the limits)",
                   l.queue_seconds, l.retry_after_seconds)},
      429);
  response.headers.emplace_back("Retry-After", std::to_string(l.retry_after_seconds));
  // The client is told to come back later: its connection is closed so that it holds no worker
  // thread meanwhile.
  response.headers.emplace_back("Connection", "close");
  return response;
}

SearchWatch::SearchWatch(const Request& request)
    : request_(request),
      budget_(current_limits().search_seconds),
      deadline_(std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(budget_))) {}

std::function<bool()> SearchWatch::should_stop() {
  return [this] {
    if (std::chrono::steady_clock::now() > deadline_)
      timed_out_ = true;
    else if (request_.client_gone && request_.client_gone())
      gone_ = true;
    return timed_out_ || gone_;
  };
}

std::optional<Response> SearchWatch::interrupted(SearchSlot& slot, const char* endpoint,
                                                 const Error& timeout) const {
  if (gone_) {
    slot.cancelled();
    return error_response({"request", endpoint, "", "the client went away"}, 499);
  }
  if (timed_out_) {
    slot.timed_out();
    return error_response(timeout, 503);
  }
  return std::nullopt;
}

}  // namespace vramplan::server
