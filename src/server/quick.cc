#include "server/quick.h"

#include "vramplan/io/options.h"
#include "vramplan/io/quick_settings.h"
#include "vramplan/report/quick_report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

json quick_options_json() {
  return {{"options", option_list_json(quick_options())}, {"examples", quick_examples_json()}};
}

}  // namespace

Response handle_quick(const Request& request) {
  Result<json> parsed = parse_json_object(request);
  if (!parsed) return error_response(parsed.error());
  Result<QuickAnswer> answer = quick_settings(*parsed);
  if (!answer) return error_response(answer.error());
  return json_response(quick_to_json(*answer), 200, wants_pretty(request));
}

Response handle_quick_options(const Request& request) {
  static const json options = quick_options_json();
  return json_response(options, 200, wants_pretty(request));
}

}  // namespace vramplan::server
