#include "server/quick.h"

#include <string_view>

#include "vramplan/io/options.h"
#include "vramplan/io/quick_settings.h"
#include "vramplan/report/quick_report.h"

namespace vramplan::server {
namespace {

using nlohmann::json;

const char* kind_text(OptionKind kind) {
  switch (kind) {
    case OptionKind::kInteger:
      return "integer";
    case OptionKind::kNumber:
      return "number";
    case OptionKind::kBool:
      return "bool";
    case OptionKind::kChoice:
      return "choice";
    case OptionKind::kObject:
      return "object";
    case OptionKind::kText:
      break;
  }
  return "text";
}

json choices_of(std::string_view text) {
  json out = json::array();
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (!item.empty()) out.push_back(std::string(item));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

json quick_options_json() {
  json options = json::array();
  for (const OptionSpec& o : quick_options())
    options.push_back({{"key", o.key},
                       {"flag", flag_name(o.key)},
                       {"kind", kind_text(o.kind)},
                       {"group", o.group},
                       {"default", o.default_text},
                       {"help", o.help},
                       {"choices", choices_of(o.choices)}});
  return {{"options", std::move(options)}, {"examples", quick_examples_json()}};
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
