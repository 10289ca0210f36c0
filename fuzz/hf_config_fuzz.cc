// The Hugging Face config.json reader (model/hf_config.cc, families, limits): the fuzzer's bytes
// as a config.json, as a preset file, `--model path` or a Hub answer reach it. An accepted config
// is then estimated for training and for serving (as "model_config" in the settings, the way the
// API takes it) and both answers must pass check_bytes; a rejection must name its field.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz_checks.h"
#include "fuzz_targets.h"
#include "server/api.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_request.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/report/settings_report.h"

namespace vramplan::fuzz {

int fuzz_hf_config(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<ParsedModel> parsed = parse_hf_config(text, "fuzz");
  if (!parsed) {
    check_error(parsed.error());
    return 0;
  }
  if (auto invalid = validate_model(parsed->model))
    fail("parse_hf_config accepted a model validate_model refuses", invalid->message());
  nlohmann::json config = nlohmann::json::parse(text, nullptr, false);
  if (config.is_discarded()) fail("parse_hf_config accepted text that is not JSON", text);
  nlohmann::json settings = {{"model_config", std::move(config)}};
  Result<SettingsEstimate> training = estimate_settings(settings, server::refuse_files);
  if (training)
    check_bytes(settings_estimate_to_json(*training));
  else
    check_error(training.error());
  Result<SettingsInference> serving = infer_settings(settings, server::refuse_files);
  if (serving)
    check_bytes(settings_inference_to_json(*serving));
  else
    check_error(serving.error());
  return 0;
}

}  // namespace vramplan::fuzz
