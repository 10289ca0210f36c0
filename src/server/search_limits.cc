#include "server/search_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "server/plan.h"

namespace vramplan::server {
namespace {

std::mutex mutex;
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

SearchSlot::SearchSlot(SearchSlot&& other) noexcept : held_(other.held_), outcome_(other.outcome_) {
  other.held_ = false;
}

SearchSlot::~SearchSlot() {
  if (!held_) return;
  std::lock_guard lock(mutex);
  --counters.running;
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
       fmt::format("every search slot is taken; retry in {} s (vramplan serve --max-searches "
                   "sets the limit)",
                   l.retry_after_seconds)},
      429);
  response.headers.emplace_back("Retry-After", std::to_string(l.retry_after_seconds));
  // The client is told to come back later: its connection is closed so that it holds no worker
  // thread meanwhile.
  response.headers.emplace_back("Connection", "close");
  return response;
}

}  // namespace vramplan::server
