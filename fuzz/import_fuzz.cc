// One importer (a --from-format name of interop/formats.cc) on the
// fuzzer's bytes as the file or command line the user pastes. An accepted import is estimated as
// `vramplan estimate --from` (training formats) or `vramplan infer --from` (serving) would, and the
// answer must pass check_bytes; a refusal, of the import or of the estimate, must name its field.
// imported_to_json (what /api/import answers) must give JSON that parses.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz_checks.h"
#include "fuzz_targets.h"
#include "server/api.h"
#include "vramplan/interop/import.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/report/settings_report.h"

namespace vramplan::fuzz {

int fuzz_import(std::string_view format, const uint8_t* data, size_t size) {
  using nlohmann::json;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result<Imported> imported = import_config(text, format);
  if (!imported) {
    check_error(imported.error());
    return 0;
  }
  (void)json::parse(
      imported_to_json(*imported).dump(-1, ' ', false, json::error_handler_t::replace));
  bool serving = false;
  for (const ImportFormat& f : import_formats())
    if (format == f.name) serving = f.kind == ImportKind::kServing;
  // As the API gets it: the text under "from"; no model given beside it, so the file's own (or
  // a preset it names) is used.
  const json settings = {{"from", text}, {"from_format", std::string(format)}};
  if (serving) {
    Result<SettingsInference> result = infer_settings(settings, server::refuse_files);
    if (result)
      check_bytes(settings_inference_to_json(*result));
    else
      check_error(result.error());
  } else {
    Result<SettingsEstimate> result = estimate_settings(settings, server::refuse_files);
    if (result)
      check_bytes(settings_estimate_to_json(*result));
    else
      check_error(result.error());
  }
  return 0;
}

}  // namespace vramplan::fuzz
