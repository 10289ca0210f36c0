// POST /api/fit and GET /api/fit/options: the "what fits" questions over HTTP (docs/web-api.md).
// The answer is fit_to_json(), what `vramplan fit --format json` prints. The GPU-count question
// runs the planner once per count, so it takes a search slot and the search limits of plan.h
// (GPUs up to kMaxPlanGpus, threads, the time budget, stopping when the client goes away).
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "server/api.h"
#include "server/plan.h"
#include "server/search_limits.h"
#include "vramplan/io/fit_settings.h"
#include "vramplan/report/fit_report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

std::optional<Error> bound_gpu_search(FitRequest& r) {
  if (r.up_to > kMaxPlanGpus)
    return Error{"up_to", std::to_string(r.up_to),
                 fmt::format("an integer from 1 to {} GPUs on the server", kMaxPlanGpus),
                 "larger searches are for `vramplan fit gpus` on the command line"};
  if (r.up_to == 0) r.up_to = kMaxPlanGpus;
  if (r.plan.threads > kMaxPlanThreads)
    return Error{"threads", std::to_string(r.plan.threads),
                 fmt::format("0 (up to {}) to {} on the server", kMaxPlanThreads, kMaxPlanThreads),
                 "the server bounds the threads one search may take"};
  if (r.plan.threads == 0) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    r.plan.threads = std::min(cores, kMaxPlanThreads);
  }
  return std::nullopt;
}

Response gpu_count(const Request& request, FitRequest r) {
  if (auto e = bound_gpu_search(r)) return error_response(*e);
  std::optional<SearchSlot> slot = SearchSlot::take(request.client_gone);
  if (!slot && request.client_gone && request.client_gone())
    return error_response({"request", "POST /api/fit", "", "the client went away"}, 499);
  if (!slot) return too_many_searches();
  SearchWatch watch(request);
  r.plan.should_stop = watch.should_stop();
  Result<FitAnswer> answer = fit(r);
  if (std::optional<Response> stopped = watch.interrupted(
          *slot, "POST /api/fit",
          Error{
              "search", "gpus",
              "a search that ends within the server's budget: fix some dimensions (tp, pp, ...), a "
              "lower up_to, or `vramplan fit gpus` on the command line",
              fmt::format("the searches ran past this server's budget of {:g} s (vramplan serve "
                          "--search-seconds)",
                          watch.budget_seconds())}))
    return *stopped;
  if (!answer) return error_response(answer.error());
  return json_response(fit_to_json(*answer), 200, wants_pretty(request));
}

}  // namespace

Response handle_fit(const Request& request) {
  Result<json> body = parse_json_object(request);
  if (!body) return error_response(body.error());
  Result<FitRequest> fit_request = fit_request_from_settings(*body, refuse_files);
  if (!fit_request) return error_response(fit_request.error());
  if (fit_request->question == FitQuestion::kGpus)
    return gpu_count(request, std::move(fit_request).value());
  Result<FitAnswer> answer = fit(*fit_request);
  if (!answer) return error_response(answer.error());
  return json_response(fit_to_json(*answer), 200, wants_pretty(request));
}

Response handle_fit_options(const Request& request) {
  static const json options = {
      {"options", option_list_json(fit_options())},
      {"plan_options",
       "every key of GET /api/plan/options: headroom for every question, the "
       "rest for question gpus"},
      {"scenario_options", "every key of GET /api/options"},
      {"limits", {{"max_gpus", kMaxPlanGpus}, {"max_threads", kMaxPlanThreads}}}};
  return json_response(options, 200, wants_pretty(request));
}

}  // namespace vramplan::server
