// GET /api/hub/{org}/{name}[@revision]: what the Hub holds for a model id, so that the web UI
// can show what it fetched (the commit, the checkpoint's stored size and dtypes) before the id is
// used in a scenario. The same client, cache and token policy as "model" in /api/estimate.
#include <fmt/format.h>

#include <optional>
#include <string>

#include "hub/hub_models.h"
#include "server/api.h"
#include "server/hub_access.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/params.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

// The parameter counts vramplan computes for the config, or why it cannot read it (the answer
// still shows the config: the user sees what was fetched and what is wrong with it).
struct Counted {
  json parameters = nullptr;
  json model_error = nullptr;
  int64_t total = 0;  // 0: not counted (the checkpoint note then makes no comparison)
  std::optional<ParamCounts> counts;  // for the module-by-module check
};

Counted count(const std::string& config_text, const std::string& id) {
  Counted out;
  Result<ParsedModel> parsed = parse_hf_config(config_text, id);
  if (!parsed) {
    out.model_error = error_json(parsed.error())["error"];
    return out;
  }
  if (std::optional<Error> invalid = validate_model(parsed->model)) {
    out.model_error = error_json(*invalid)["error"];
    return out;
  }
  const ParamCounts counts = count_parameters(parsed->model);
  out.total = counts.total;
  out.counts = counts;
  out.parameters = {{"total", counts.total}, {"active", counts.active}};
  return out;
}

}  // namespace

Response handle_hub_model(const Request& request) {
  const std::string& id = request.path_params.at("id");
  hub::HubModels hub = request_hub();
  Result<std::string> config_text = hub.fetch_config(id);
  if (!config_text) return hub_aware_error(config_text.error(), hub);
  json config = json::parse(*config_text, nullptr, false);
  if (config.is_discarded()) config = nullptr;  // the client checked it is JSON; never expected
  Counted counted = count(*config_text, id);
  std::vector<std::string> notes;
  const std::optional<json> checkpoint =
      counted.counts ? hub.report(*counted.counts, notes) : hub.report(counted.total, notes);
  return json_response({{"model", id},
                        {"commit", hub.fetched_commit()},
                        {"config", std::move(config)},
                        {"parameters", std::move(counted.parameters)},
                        {"model_error", std::move(counted.model_error)},
                        {"checkpoint", checkpoint.value_or(json(nullptr))},
                        {"notes", notes}},
                       200, wants_pretty(request));
}

}  // namespace vramplan::server
