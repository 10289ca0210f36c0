#include "server/api.h"

#include <fmt/format.h>

#include <exception>

#include "server/plan.h"
#include "server/quick.h"
#include "server/static_assets.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

constexpr Route kApiRoutes[] = {
    {"GET", "/api/health", handle_health},
    {"GET", "/api/options", handle_options},
    {"GET", "/api/models", handle_models},
    {"GET", "/api/models/{name}", handle_model_config},
    {"GET", "/api/gpus", handle_gpus},
    {"POST", "/api/estimate", handle_estimate},
    {"POST", "/api/sweep", handle_sweep},
    {"GET", "/api/infer/options", handle_infer_options},
    {"POST", "/api/infer", handle_infer},
    {"GET", "/api/hub/{id}", handle_hub_model},
    {"POST", "/api/plan", handle_plan},
    {"GET", "/api/plan/options", handle_plan_options},
    {"POST", "/api/roofline", handle_roofline},
    {"POST", "/api/quick", handle_quick},
    {"GET", "/api/quick/options", handle_quick_options},
    {"POST", "/api/fit", handle_fit},
    {"GET", "/api/fit/options", handle_fit_options},
};

// "/a/b/" -> "/a/b": a trailing slash names the same resource.
std::string_view without_trailing_slash(std::string_view path) {
  if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

// Matches "/api/models/{name}" against a path; a {param} in the last position takes the rest.
bool match_route(std::string_view pattern, std::string_view path,
                 std::map<std::string, std::string>& params) {
  path = without_trailing_slash(path);
  while (!pattern.empty()) {
    const size_t pattern_end = std::min(pattern.find('/', 1), pattern.size());
    const std::string_view segment = pattern.substr(0, pattern_end);
    pattern.remove_prefix(pattern_end);
    if (segment.size() > 3 && segment[1] == '{' && segment.back() == '}') {
      if (path.size() < 2 || path[0] != '/') return false;
      const size_t path_end = pattern.empty() ? path.size() : path.find('/', 1);
      if (path_end == std::string_view::npos) return false;
      params[std::string(segment.substr(2, segment.size() - 3))] = path.substr(1, path_end - 1);
      path.remove_prefix(path_end);
      continue;
    }
    if (path.substr(0, segment.size()) != segment) return false;
    path.remove_prefix(segment.size());
    if (!path.empty() && path[0] != '/') return false;  // "/api/gpusx" is not "/api/gpus"
  }
  return path.empty();
}

std::string route_list() {
  std::string list;
  for (const Route& r : kApiRoutes)
    list += fmt::format("{}{} {}", list.empty() ? "" : ", ", r.method, r.pattern);
  return list;
}

Response method_not_allowed(const Request& request, const std::string& allowed) {
  Response response =
      error_response({"method", request.method, allowed,
                      fmt::format("{} does not take {}", request.path, request.method)},
                     405);
  response.headers.emplace_back("Allow", allowed);
  return response;
}

Response route_api(Request& request) {
  std::string allowed;
  for (const Route& route : kApiRoutes) {
    std::map<std::string, std::string> params;
    if (!match_route(route.pattern, request.path, params)) continue;
    const bool head_of_get = request.method == "HEAD" && route.method == "GET";
    if (request.method == route.method || head_of_get) {
      request.path_params = std::move(params);
      return route.handler(request);
    }
    allowed += (allowed.empty() ? "" : ", ") + std::string(route.method);
    if (route.method == "GET") allowed += ", HEAD";
  }
  if (!allowed.empty()) return method_not_allowed(request, allowed);
  return error_response({"path", request.path, route_list(), "no such API endpoint"}, 404);
}

bool is_api_path(std::string_view path) { return path == "/api" || path.substr(0, 5) == "/api/"; }

// Depth of the deepest [ or { nesting, scanning outside strings; stops early past `limit`.
int json_nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

constexpr size_t kMaxEchoedValue = 200;

std::string excerpt(std::string_view text, size_t max = 60) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max)) + "...";
}

}  // namespace

std::span<const Route> api_routes() { return kApiRoutes; }

Response json_response(const json& body, int status, bool pretty) {
  Response response;
  response.status = status;
  // Replace invalid UTF-8 (a user's bytes echoed in an error) instead of throwing mid-response.
  response.body = pretty ? body.dump(2, ' ', false, json::error_handler_t::replace) + "\n"
                         : body.dump(-1, ' ', false, json::error_handler_t::replace);
  return response;
}

json error_json(const Error& error) {
  // A megabyte-long value is not echoed back whole (twice, with the message).
  Error shown = error;
  if (shown.value.size() > kMaxEchoedValue) shown.value = excerpt(shown.value, kMaxEchoedValue);
  return {{"error",
           {{"field", shown.field},
            {"value", shown.value},
            {"accepted", shown.accepted},
            {"reason", shown.reason},
            {"message", shown.message()}}}};
}

Response error_response(const Error& error, int status) {
  return json_response(error_json(error), status);
}

bool wants_pretty(const Request& request) {
  auto it = request.query.find("pretty");
  return it != request.query.end() && it->second != "0" && it->second != "false";
}

Result<json> parse_json_object(const Request& request) {
  const std::string accepted = "a JSON object (Content-Type: application/json)";
  if (request.content_type.find("multipart/form-data") != std::string::npos)
    return Error{"body", request.content_type, accepted, "form uploads are not read"};
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos)
    return Error{"body", "", accepted, "the request has no body"};
  if (json_nesting_depth(request.body, kMaxJsonDepth) > kMaxJsonDepth)
    return Error{"body", excerpt(request.body), accepted,
                 fmt::format("nested deeper than {} levels", kMaxJsonDepth)};
  json parsed;
  try {
    parsed = json::parse(request.body);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e9999
    return Error{"body", excerpt(request.body), accepted,
                 fmt::format("not valid JSON: {}", e.what())};
  }
  if (!parsed.is_object())
    return Error{"body", excerpt(request.body), accepted,
                 fmt::format("a JSON {}, not an object", parsed.type_name())};
  return parsed;
}

Response handle_request(Request request) {
  try {
    if (is_api_path(request.path)) return route_api(request);
    if (request.method != "GET" && request.method != "HEAD")
      return method_not_allowed(request, "GET, HEAD");
    return serve_static(request.path);
  } catch (const std::exception& e) {
    return error_response({"request", request.method + " " + request.path, "",
                           fmt::format("internal error: {}", e.what())},
                          500);
  } catch (...) {
    return error_response({"request", request.method + " " + request.path, "", "internal error"},
                          500);
  }
}

}  // namespace vramplan::server
