#include "server/sweep.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <optional>

#include "server/api.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/report/report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

constexpr const char* kSweepKeys[] = {"scenario", "vary", "values",  "from",
                                      "to",       "step", "multiply"};

std::optional<Error> check_sweep_keys(const json& body) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    bool known = false;
    for (const char* key : kSweepKeys) known = known || it.key() == key;
    if (!known)
      return Error{key_as_written(it.key()), it.value().dump(),
                   "scenario, vary, and values or from + to + step|multiply", "unknown field"};
  }
  return std::nullopt;
}

Result<const OptionSpec*> varied_option(const json& body) {
  const std::string accepted = "a scenario setting's key (GET /api/options), e.g. \"seq_len\"";
  if (!body.contains("vary") || !body["vary"].is_string())
    return Error{"vary", body.contains("vary") ? body["vary"].dump() : "", accepted,
                 "the setting to vary is required"};
  const std::string key = body["vary"].get<std::string>();
  for (const OptionSpec& o : scenario_options()) {
    if (key != o.key) continue;
    if (o.kind == OptionKind::kObject)
      return Error{"vary", key, accepted, "an object setting cannot be varied"};
    return &o;
  }
  return Error{"vary", key, accepted, "not a scenario setting"};
}

Result<std::vector<json>> listed_values(const json& values) {
  if (!values.is_array() || values.empty())
    return Error{"values", values.dump(), "a non-empty array of values", ""};
  if (values.size() > kMaxSweepPoints)
    return Error{"values", fmt::format("{} values", values.size()),
                 fmt::format("at most {} points", kMaxSweepPoints), "too many points"};
  std::vector<json> out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].is_structured() || values[i].is_null())
      return Error{fmt::format("values[{}]", i), values[i].dump(),
                   "a number, a string or a boolean", ""};
    out.push_back(values[i]);
  }
  return out;
}

// A range bound or stride: a finite number, integral when the setting is an integer.
Result<double> range_number(const json& body, const char* field, bool integral) {
  if (!body.contains(field)) return Error{field, "", "a number", "missing"};
  const json& v = body[field];
  const char* kind = integral ? "an integer" : "a number";
  if (!v.is_number()) return Error{field, v.dump(), kind, ""};
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > 9e15)
    return Error{field, v.dump(), fmt::format("{} of magnitude at most 9e15", kind), ""};
  if (integral && d != std::floor(d)) return Error{field, v.dump(), kind, "the setting counts"};
  return d;
}

json range_value(double v, bool integral) {
  if (integral) return static_cast<int64_t>(std::llround(v));
  return v;
}

Error too_many(const char* field, const json& stride, size_t count) {
  return Error{
      field, stride.dump(), fmt::format("a stride giving at most {} points", kMaxSweepPoints),
      fmt::format("the range holds {}{} points", count > kMaxSweepPoints ? "over " : "", count)};
}

Result<std::vector<json>> range_values(const json& body, const OptionSpec& option) {
  const bool integral = option.kind == OptionKind::kInteger;
  if (!integral && option.kind != OptionKind::kNumber)
    return Error{"from", body.contains("from") ? body["from"].dump() : "",
                 "\"values\": [...] listing the values of this setting",
                 fmt::format("{} is not numeric", option.key)};
  Result<double> from = range_number(body, "from", integral);
  if (!from) return from.error();
  Result<double> to = range_number(body, "to", integral);
  if (!to) return to.error();
  if (*to < *from)
    return Error{"to", body["to"].dump(), fmt::format("a number at least from ({})", *from), ""};
  const bool has_step = body.contains("step"), has_multiply = body.contains("multiply");
  if (has_step == has_multiply)
    return Error{has_step ? "multiply" : "step", "", "exactly one of step or multiply",
                 has_step ? "both given" : "neither given"};
  std::vector<json> out;
  if (has_step) {
    Result<double> step = range_number(body, "step", integral);
    if (!step) return step.error();
    if (*step <= 0) return Error{"step", body["step"].dump(), "a number above 0", ""};
    // A small tolerance keeps "to" itself when decimal steps do not add up exactly.
    const double count = std::floor((*to - *from) / *step + 1e-9) + 1;
    if (count > kMaxSweepPoints)
      return too_many("step", body["step"], static_cast<size_t>(std::min(count, 1e9)));
    for (int64_t i = 0; i < static_cast<int64_t>(count); ++i)
      out.push_back(range_value(*from + static_cast<double>(i) * *step, integral));
    return out;
  }
  Result<double> factor = range_number(body, "multiply", integral);
  if (!factor) return factor.error();
  if (*factor <= 1) return Error{"multiply", body["multiply"].dump(), "a factor above 1", ""};
  if (*from <= 0)
    return Error{"from", body["from"].dump(), "a number above 0 (the range multiplies it)", ""};
  for (double v = *from; v <= *to * (1 + 1e-12); v *= *factor) {
    if (out.size() == kMaxSweepPoints)
      return too_many("multiply", body["multiply"], out.size() + 1);
    out.push_back(range_value(v, integral));
  }
  return out;
}

json sweep_point(const json& value, const SettingsEstimate& result) {
  const Estimate& e = result.estimate;
  json point = {{"value", value},
                {"peak", peak_json(e)},
                {"world_size", e.world_size},
                {"microbatches", e.microbatches}};
  // The first fit row exactly as POST /api/estimate writes it (host check included).
  if (!e.fit.empty()) point["fit"] = fit_json(e.fit.front());
  return point;
}

}  // namespace

Result<SweepRequest> parse_sweep_request(const json& body) {
  if (auto e = check_sweep_keys(body)) return *e;
  SweepRequest request;
  if (!body.contains("scenario") || !body["scenario"].is_object())
    return Error{"scenario", body.contains("scenario") ? body["scenario"].dump() : "",
                 "a JSON object of scenario settings, as for POST /api/estimate", ""};
  request.scenario = body["scenario"];
  Result<const OptionSpec*> option = varied_option(body);
  if (!option) return option.error();
  request.vary = (*option)->key;
  const bool listed = body.contains("values");
  if (listed && (body.contains("from") || body.contains("to")))
    return Error{"values", body["values"].dump().substr(0, 60),
                 "either \"values\" or \"from\" + \"to\", not both", ""};
  Result<std::vector<json>> values =
      listed ? listed_values(body["values"]) : range_values(body, **option);
  if (!values) return values.error();
  request.values = std::move(values).value();
  return request;
}

json run_sweep(const SweepRequest& request, const FileReader& read_file) {
  json points = json::array();
  int64_t errors = 0;
  json settings = request.scenario;
  for (const json& value : request.values) {
    settings[request.vary] = value;
    Result<SettingsEstimate> result =
        estimate_settings(settings, read_file, nullptr, {.explain = false});
    if (result) {
      points.push_back(sweep_point(value, *result));
    } else {
      ++errors;
      json point = error_json(result.error());
      point["value"] = value;
      points.push_back(std::move(point));
    }
  }
  return {{"vary", request.vary},
          {"count", request.values.size()},
          {"errors", errors},
          {"points", std::move(points)}};
}

Response handle_sweep(const Request& request) {
  Result<json> body = parse_json_object(request);
  if (!body) return error_response(body.error());
  Result<SweepRequest> sweep = parse_sweep_request(*body);
  if (!sweep) return error_response(sweep.error());
  return json_response(run_sweep(*sweep, refuse_files), 200, wants_pretty(request));
}

}  // namespace vramplan::server
