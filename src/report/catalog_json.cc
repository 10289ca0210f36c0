#include "vramplan/report/catalog_json.h"

#include "vramplan/model/hf_config.h"
#include "vramplan/model/params.h"
#include "vramplan/model/presets.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {

nlohmann::json presets_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const Preset& p : presets()) {
    Result<ParsedModel> parsed = parse_hf_config(p.config, p.name);
    if (!parsed) continue;  // every shipped preset parses (a unit test checks); never list junk
    const ParamCounts counts = count_parameters(parsed->model);
    out.push_back({{"name", p.name},
                   {"hub_id", p.hub_id},
                   {"model_type", parsed->model.model_type},
                   {"total", counts.total},
                   {"active", counts.active}});
  }
  return out;
}

nlohmann::json gpus_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const Gpu& g : builtin_gpus().gpus) {
    out.push_back({{"id", g.id},
                   {"name", g.name},
                   {"nominal_bytes", g.nominal_bytes},
                   {"usable_bytes", g.usable_bytes},
                   {"source", g.source}});
  }
  return out;
}

}  // namespace vramplan
