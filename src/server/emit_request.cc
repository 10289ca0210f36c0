#include "server/emit_request.h"

#include <fmt/format.h>

#include "vramplan/interop/emit.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/report/plan_report.h"

namespace vramplan::server {

using nlohmann::json;

Result<std::optional<std::string>> take_emit(json& settings) {
  if (!settings.contains("emit")) return std::optional<std::string>();
  const json value = settings["emit"];
  settings.erase("emit");
  if (value.is_null()) return std::optional<std::string>();
  if (!value.is_string() || value.get<std::string>().empty()) {
    std::string names;
    for (const EmitFormat& f : emit_formats())
      names += (names.empty() ? "" : ", ") + std::string(f.name);
    return Error{"emit", value.dump(), "the name of a format: " + names, "not a format name"};
  }
  return std::optional<std::string>(value.get<std::string>());
}

Response emit_response(const Result<std::string>& config, const std::string& format, bool pretty) {
  if (!config) return error_response(config.error());
  return json_response({{"config", *config}, {"format", format}}, 200, pretty);
}

Response emit_plan_winner(const PlanResult& result, const std::string& format, bool pretty) {
  if (result.candidates.empty())
    return error_response(Error{"emit", format, "a plan with a layout that fits", "nothing fits"});
  const json candidates = plan_to_json(result)["candidates"];
  std::optional<Error> first_refusal;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const json& settings = candidates[i]["scenario"];
    Result<ResolvedScenario> resolved = resolve_scenario(settings, refuse_files);
    if (!resolved) return error_response(resolved.error());
    Result<std::string> config = emit_training(resolved->scenario, settings, format);
    if (!config) {
      if (config.error().field != "emit") return error_response(config.error());
      if (!first_refusal) first_refusal = config.error();
      continue;
    }
    json out = {{"config", *config}, {"format", format}};
    if (i > 0)
      out["note"] = fmt::format("choice #{} ({}): #1 cannot be written as {}: {}", i + 1,
                                candidates[i].value("layout", ""), format, first_refusal->reason);
    return json_response(out, 200, pretty);
  }
  return error_response(*first_refusal);
}

}  // namespace vramplan::server
