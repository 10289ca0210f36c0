#include "vramplan/report/plan_emit.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "vramplan/interop/emit.h"
#include "vramplan/report/plan_report.h"

namespace vramplan {

Result<PlanEmit> emit_plan_winner(const PlanResult& result, const std::string& format,
                                  const FileReader& read_file) {
  if (result.candidates.empty())
    return Error{"emit", format, "a plan with a layout that fits", "nothing fits"};
  const nlohmann::json candidates = plan_to_json(result)["candidates"];
  std::optional<Error> first_refusal;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const nlohmann::json& settings = candidates[i]["scenario"];
    Result<ResolvedScenario> resolved = resolve_scenario(settings, read_file);
    if (!resolved) return resolved.error();
    Result<std::string> config = emit_training(resolved->scenario, settings, format);
    if (!config) {
      if (config.error().field != "emit") return config.error();
      if (!first_refusal) first_refusal = config.error();
      continue;
    }
    PlanEmit out{std::move(config).value(), format, i, candidates[i].value("layout", ""), ""};
    if (first_refusal) out.skipped = first_refusal->reason;
    return out;
  }
  return *first_refusal;
}

}  // namespace vramplan
