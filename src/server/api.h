// The HTTP API as pure functions: a Request in, a Response out, no sockets. http_server.cc
// feeds it from cpp-httplib; the unit tests call it directly.
//
// Endpoints (docs/web-api.md documents them for users):
//   GET  /api/health           {"status": "ok", "version": ...}
//   GET  /api/options          every scenario setting: key, flag, kind, group, default, help,
//                              choices (the web form is built from it)
//   GET  /api/models           presets: name, hub_id, model_type, total, active
//   GET  /api/models/{name}    a preset's config.json (name or Hub id)
//   GET  /api/gpus             the GPU catalog
//   POST /api/estimate         scenario settings in, `vramplan estimate --format json` out
//   POST /api/sweep            one setting varied over values: the peak per value
//   GET  /api/infer/options    every serving setting, in the shape of /api/options
//   POST /api/infer            serving settings in, `vramplan infer --format json` out
//   POST /api/quick            quick-calculator settings in, `vramplan quick --format json` out
//   GET  /api/quick/options    the quick calculator's settings and its examples
//   POST /api/roofline         scenario settings + cluster in, `vramplan roofline --format json`
//                              out
//   POST /api/fit              a "what fits" question in, `vramplan fit --format json` out
//   GET  /api/fit/options      the fit questions' own settings (fit.cc)
//   GET  /api/hub/{org}/{name}[@revision]
//                              a Hub model's config.json, commit, checkpoint and notes
// "emit": "<format>" in /api/estimate, /api/infer and /api/plan answers {"config", "format"}
// instead (server/emit_request.h).
// "model": "org/name[@revision]" in /api/estimate and /api/infer is fetched from the Hub as the
// CLI does (hub_access.h: no token unless `serve --hub-token`; never a local file).
// Errors: {"error": {"field", "value", "accepted", "reason", "message"}} with 400 (bad input),
// 403 (gated or private Hub model), 404 (unknown route or model), 405 (wrong method, with Allow),
// 413 (body too large, sent by http_server), 500 (a bug; the server keeps running), 502 (the Hub
// is unreachable or answered wrongly), 503 (offline without a cached copy, or rate-limited),
// 504 (the Hub did not answer in time).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/io/options.h"

namespace vramplan::server {

struct Request {
  std::string method;  // "GET", "HEAD", "POST", ...
  std::string path;    // percent-decoded, without the query: "/api/models/Llama-3.1-8B"
  std::map<std::string, std::string> query;  // ?pretty=1 -> {"pretty": "1"}
  std::string body;
  std::string content_type;                        // the Content-Type header, "" when absent
  std::map<std::string, std::string> path_params;  // filled by the router: {name} -> value
  // True once the client has closed its connection (http_server.cc probes the socket); empty
  // when there is no connection to ask (unit tests). Long handlers (the planner's search) ask it
  // to stop work nobody will read. Thread-safe.
  std::function<bool()> client_gone;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

using Handler = Response (*)(const Request&);

struct Route {
  std::string_view method;   // "GET" (also answers HEAD) or "POST"
  std::string_view pattern;  // "/api/models/{name}"; a {param} at the end takes the rest of the
                             // path, slashes included, so Hub ids like org/model work
  Handler handler;
};

// Every API route, in the order 404 answers list them. Adding an endpoint is one line in
// kApiRoutes (api.cc) plus its handler: Response handle_x(const Request&), declared below. The
// router answers 404 and 405 (with Allow) for all of them.
std::span<const Route> api_routes();

// Answers any request: /api/... through api_routes(), everything else from the embedded web UI.
// Never throws: a handler's exception becomes a 500 JSON error.
Response handle_request(Request request);

// Helpers shared by the handlers.
Response json_response(const nlohmann::json& body, int status = 200, bool pretty = false);
nlohmann::json error_json(const Error& error);
Response error_response(const Error& error, int status = 400);
// The body as a JSON object, or an Error naming "body" (empty, not JSON, nested deeper than
// kMaxJsonDepth, or not an object).
Result<nlohmann::json> parse_json_object(const Request& request);
// ?pretty (any value but 0/false): two-space indented JSON with a final newline, as the CLI
// prints it.
bool wants_pretty(const Request& request);

// Nesting deeper than this is refused before parsing: no config.json or scenario needs more, and
// recursion over a megabyte of '[' would exhaust a thread's stack.
inline constexpr int kMaxJsonDepth = 64;

// The server's FileReader: a model given as a path is refused, naming "model" (a server must not
// read its host's files; configs come inline as "model_config").
Result<std::string> refuse_files(const std::string& path);

// The registry's settings as the options endpoints list them: [{key, flag, kind, group, default,
// help, choices}] (api_handlers.cc).
nlohmann::json option_list_json(std::span<const OptionSpec> specs);

// Handlers (api_handlers.cc, sweep.cc).
Response handle_health(const Request& request);
Response handle_options(const Request& request);
Response handle_models(const Request& request);
Response handle_model_config(const Request& request);
Response handle_gpus(const Request& request);
Response handle_estimate(const Request& request);
Response handle_sweep(const Request& request);
Response handle_infer_options(const Request& request);
Response handle_infer(const Request& request);
Response handle_hub_model(const Request& request);
Response handle_roofline(const Request& request);  // roofline_handler.cc
Response handle_fit(const Request& request);       // fit.cc
Response handle_fit_options(const Request& request);

}  // namespace vramplan::server
