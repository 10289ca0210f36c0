#include "server/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "server/emit_request.h"
#include "server/search_limits.h"
#include "vramplan/io/plan_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/plan/planner.h"
#include "vramplan/report/plan_report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

// The most sampled points of the space one answer carries (about 0.3 KB of JSON each).
constexpr int64_t kMaxPlanSpacePoints = 10000;

const char* plan_kind_name(OptionKind kind) {
  return kind == OptionKind::kNumber ? "number" : "integer";
}

json plan_options_json() {
  json options = json::array();
  options.push_back(
      {{"key", "gpus"},
       {"flag", flag_name("gpus")},
       {"kind", "integer"},
       {"default", "required"},
       {"help", fmt::format("GPUs to plan for (the server takes 1 to {})", kMaxPlanGpus)}});
  for (const OptionSpec& o : plan_options()) {
    std::string help = o.help;
    if (std::string(o.key) == "threads")
      help += fmt::format(" (the server takes 0 to {}; 0 means up to {})", kMaxPlanThreads,
                          kMaxPlanThreads);
    options.push_back({{"key", o.key},
                       {"flag", flag_name(o.key)},
                       {"kind", plan_kind_name(o.kind)},
                       {"default", o.default_text},
                       {"help", help}});
  }
  return {{"options", std::move(options)},
          {"scenario_options",
           "every key of GET /api/options; layout keys (tp, pp, dp, "
           "micro_batch, zero, ...) given fix that dimension of the search"},
          {"required", {"model (or model_config / architecture keys)", "gpus", "global_batch"}},
          {"limits",
           {{"max_gpus", kMaxPlanGpus},
            {"max_threads", kMaxPlanThreads},
            {"max_space_points", kMaxPlanSpacePoints}}}};
}

// The server's bounds on a search request (see plan.h); 0 threads becomes the bounded default.
std::optional<Error> bound_search(PlanRequest& request) {
  if (request.gpus > kMaxPlanGpus)
    return Error{"gpus", std::to_string(request.gpus),
                 fmt::format("an integer from 1 to {} on the server", kMaxPlanGpus),
                 "larger searches are for `vramplan plan` on the command line"};
  if (request.threads > kMaxPlanThreads)
    return Error{"threads", std::to_string(request.threads),
                 fmt::format("0 (up to {}) to {} on the server", kMaxPlanThreads, kMaxPlanThreads),
                 "the server bounds the threads one search may take"};
  if (request.space_points > kMaxPlanSpacePoints)
    return Error{"space", std::to_string(request.space_points),
                 fmt::format("0 to {} points on the server", kMaxPlanSpacePoints),
                 "the server bounds the points one answer carries"};
  if (request.threads == 0) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    request.threads = std::min(cores, kMaxPlanThreads);
  }
  return std::nullopt;
}

}  // namespace

Response handle_plan(const Request& request) {
  Result<json> parsed = parse_json_object(request);
  if (!parsed) return error_response(parsed.error());
  json body = std::move(parsed).value();
  Result<std::optional<std::string>> emit = take_emit(body);
  if (!emit) return error_response(emit.error());
  Result<PlanRequest> plan_request = plan_request_from_settings(body, refuse_files);
  if (!plan_request) return error_response(plan_request.error());
  PlanRequest bounded = std::move(plan_request).value();
  if (auto error = bound_search(bounded)) return error_response(*error);
  std::optional<SearchSlot> slot = SearchSlot::take(request.client_gone);
  if (!slot && request.client_gone && request.client_gone())
    return error_response({"request", "POST /api/plan", "", "the client went away"}, 499);
  if (!slot) return too_many_searches();
  SearchWatch watch(request);
  bounded.should_stop = watch.should_stop();
  Result<PlanResult> result = plan(bounded);
  if (std::optional<Response> stopped = watch.interrupted(
          *slot, "POST /api/plan",
          Error{"search", fmt::format("{} GPUs", bounded.gpus),
                "a search that ends within the server's budget: fix some dimensions (tp, pp, ...), "
                "fewer GPUs, or `vramplan plan` on the command line",
                fmt::format("the search ran past this server's budget of {:g} s (vramplan serve "
                            "--search-seconds)",
                            watch.budget_seconds())}))
    return *stopped;
  if (!result) return error_response(result.error());
  if (*emit) return emit_plan_winner(*result, **emit, wants_pretty(request));
  return json_response(plan_to_json(*result), 200, wants_pretty(request));
}

Response handle_plan_options(const Request& request) {
  static const json options = plan_options_json();
  return json_response(options, 200, wants_pretty(request));
}

}  // namespace vramplan::server
