// POST /api/roofline: the settings of `vramplan roofline` in, its `--format json` out. The same
// pipeline (io/roofline_settings.h) and the same writer (settings_roofline_to_json) as the CLI,
// so that both answer the same settings with the same JSON; the built-in GPU catalog only (the
// server reads no files).
#include <utility>

#include "server/api.h"
#include "server/hub_access.h"
#include "vramplan/io/roofline_settings.h"
#include "vramplan/report/roofline_report.h"

namespace vramplan::server {

Response handle_roofline(const Request& request) {
  Result<nlohmann::json> parsed = parse_json_object(request);
  if (!parsed) return error_response(parsed.error());
  hub::HubModels hub = request_hub();
  Result<SettingsRoofline> result = roofline_settings(*parsed, refuse_files, hub.fetcher());
  if (!result) return hub_aware_error(result.error(), hub);
  return json_response(settings_roofline_to_json(*result), 200, wants_pretty(request));
}

}  // namespace vramplan::server
