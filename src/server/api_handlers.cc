// The read-only endpoints, /api/estimate and /api/infer. Each is a thin layer over the core: the
// JSON they return is built by the same functions the CLI prints, and a Hub model is fetched and
// reported (the "checkpoint" object, the notes in warnings[]) as the CLI does.
#include <fmt/format.h>

#include <optional>
#include <span>
#include <string>
#include <utility>

#include "server/api.h"
#include "server/emit_request.h"
#include "server/hub_access.h"
#include "server/search_limits.h"
#include "server/static_assets.h"
#include "vramplan/interop/emit.h"
#include "vramplan/interop/import.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/io/inference_settings.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/model/presets.h"
#include "vramplan/report/catalog_json.h"
#include "vramplan/report/inference_report.h"
#include "vramplan/report/settings_report.h"

#ifndef VRAMPLAN_VERSION
#define VRAMPLAN_VERSION "unknown"
#endif

namespace vramplan::server {
namespace {

using nlohmann::json;

const char* kind_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::kInteger:
      return "integer";
    case OptionKind::kNumber:
      return "number";
    case OptionKind::kBool:
      return "bool";
    case OptionKind::kText:
      return "text";
    case OptionKind::kChoice:
      return "choice";
    case OptionKind::kObject:
      return "object";
  }
  return "text";
}

// "none, selective, full" -> ["none", "selective", "full"]
json split_choices(std::string_view text) {
  json choices = json::array();
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (!item.empty()) choices.push_back(std::string(item));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return choices;
}

// The formats a view of this kind can read ("from") and write ("emit"): [{name, what}], so that a
// client offers exactly the server's formats without a list of its own.
template <typename Format>
json formats_of(std::span<const Format> formats, ImportKind kind) {
  json out = json::array();
  for (const Format& f : formats)
    if (f.kind == kind) out.push_back({{"name", f.name}, {"what", f.what}});
  return out;
}

json options_json(std::span<const OptionSpec> specs, ImportKind kind) {
  return {
      {"options", option_list_json(specs)},
      {"formats",
       {{"from", formats_of(import_formats(), kind)}, {"emit", formats_of(emit_formats(), kind)}}}};
}

// Constant answers are built once (thread-safe static initialisation) and served as text.
Response cached(const std::string& body) {
  Response response;
  response.body = body;
  return response;
}

}  // namespace

json option_list_json(std::span<const OptionSpec> specs) {
  json options = json::array();
  for (const OptionSpec& o : specs)
    options.push_back({{"key", o.key},
                       {"flag", flag_name(o.key)},
                       {"kind", kind_name(o.kind)},
                       {"group", o.group},
                       {"default", o.default_text},
                       {"help", o.help},
                       {"choices", split_choices(o.choices)}});
  return options;
}

Result<std::string> refuse_files(const std::string& path) {
  return Error{"model", path,
               "a preset name or Hub id (GET /api/models), or the config itself as "
               "\"model_config\": {...}",
               "the server does not read files on its host"};
}

Response handle_health(const Request& request) {
  json hub = nullptr;  // where Hub ids are fetched from, and whether a token goes with them
  if (Result<hub::HubSettings> settings = hub_settings())
    hub = {{"endpoint", settings->endpoint},
           {"sends_token", settings->token.has_value()},
           {"offline", settings->offline}};
  const SearchCounters searches = search_counters();
  const ServerLimits limits = current_limits();
  return json_response({{"status", "ok"},
                        {"version", VRAMPLAN_VERSION},
                        {"web_ui_built", web_ui_built()},
                        {"hub", std::move(hub)},
                        {"searches",
                         {{"running", searches.running},
                          {"waiting", searches.waiting},
                          {"limit", limits.max_searches},
                          {"budget_seconds", limits.search_seconds},
                          {"queue_seconds", limits.queue_seconds},
                          {"completed", searches.completed},
                          {"refused", searches.refused},
                          {"timed_out", searches.timed_out},
                          {"cancelled", searches.cancelled}}}},
                       200, wants_pretty(request));
}

Response handle_options(const Request& request) {
  // "output": the estimate's output settings beside the scenario (formulas), accepted by
  // /api/estimate but no scenario setting (the form and /api/roofline do not take them).
  static const json options = [] {
    json out = options_json(scenario_options(), ImportKind::kTraining);
    out["output"] = option_list_json(estimate_output_options());
    return out;
  }();
  return json_response(options, 200, wants_pretty(request));
}

Response handle_models(const Request& request) {
  static const json models = presets_json();
  static const std::string compact = models.dump();
  return wants_pretty(request) ? json_response(models, 200, true) : cached(compact);
}

Response handle_model_config(const Request& request) {
  const std::string& name = request.path_params.at("name");
  const Preset* preset = find_preset(name);
  if (preset == nullptr)
    return error_response({"name", name, "a preset name or Hub id listed by GET /api/models",
                           "no preset of that name"},
                          404);
  return json_response(json::parse(preset->config), 200, wants_pretty(request));
}

Response handle_gpus(const Request& request) {
  static const json gpus = gpus_json();
  return json_response(gpus, 200, wants_pretty(request));
}

Response handle_estimate(const Request& request) {
  Result<json> parsed = parse_json_object(request);
  if (!parsed) return error_response(parsed.error());
  json body = std::move(parsed).value();
  Result<std::optional<std::string>> emit = take_emit(body);
  if (!emit) return error_response(emit.error());
  hub::HubModels hub = request_hub();
  Result<SettingsEstimate> result = estimate_settings(body, refuse_files, hub.fetcher());
  if (!result) return hub_aware_error(result.error(), hub);
  SettingsEstimate answer = std::move(result).value();
  if (*emit)
    return emit_response(emit_training(answer.resolved.scenario, body, **emit), **emit,
                         wants_pretty(request));
  const std::optional<json> checkpoint =
      hub.report(answer.estimate.parameters, answer.estimate.warnings);
  json out = settings_estimate_to_json(answer);
  if (checkpoint) out["checkpoint"] = *checkpoint;
  return json_response(out, 200, wants_pretty(request));
}

Response handle_infer_options(const Request& request) {
  static const json options = options_json(inference_options(), ImportKind::kServing);
  return json_response(options, 200, wants_pretty(request));
}

Response handle_infer(const Request& request) {
  Result<json> parsed = parse_json_object(request);
  if (!parsed) return error_response(parsed.error());
  json body = std::move(parsed).value();
  Result<std::optional<std::string>> emit = take_emit(body);
  if (!emit) return error_response(emit.error());
  hub::HubModels hub = request_hub();
  Result<SettingsInference> result = infer_settings(body, refuse_files, hub.fetcher());
  if (!result) return hub_aware_error(result.error(), hub);
  SettingsInference answer = std::move(result).value();
  if (*emit)
    return emit_response(emit_serving(answer.resolved.scenario, body, **emit), **emit,
                         wants_pretty(request));
  const std::optional<json> checkpoint =
      hub.report(answer.estimate.parameters, answer.estimate.warnings);
  json out = settings_inference_to_json(answer);
  if (checkpoint) out["checkpoint"] = *checkpoint;
  return json_response(out, 200, wants_pretty(request));
}

}  // namespace vramplan::server
