#include "vramplan/training/uncertainty.h"

#include <cmath>

#include "base/embedded_data.h"

namespace vramplan {
namespace {

using nlohmann::json;

int64_t scaled(int64_t bytes, double error_pct) {
  const double factor = 1.0 + error_pct / 100.0;
  if (factor <= 0) return bytes;  // a spread this wide says nothing; keep the estimate
  return static_cast<int64_t>(std::llround(static_cast<double>(bytes) / factor));
}

Result<ErrorSpread> spread_of(const json& j, const char* key) {
  const std::string field = std::string("uncertainty.") + key;
  if (!j.contains(key) || !j[key].is_object())
    return Error{field, "", "an object with low_pct, high_pct, samples, basis", "missing"};
  const json& o = j[key];
  ErrorSpread s;
  if (!o.value("low_pct", json()).is_number() || !o.value("high_pct", json()).is_number())
    return Error{field, o.dump(), "numbers low_pct <= high_pct, both > -100", ""};
  s.low_pct = o["low_pct"].get<double>();
  s.high_pct = o["high_pct"].get<double>();
  s.samples = o.value("samples", 0);
  s.basis = o.value("basis", "");
  if (!(s.low_pct <= s.high_pct) || s.low_pct <= -100)
    return Error{field, o.dump(), "numbers low_pct <= high_pct, both > -100", ""};
  return s;
}

json spread_json(const ErrorSpread& s) {
  auto round2 = [](double v) { return std::round(v * 100) / 100; };
  return {{"low_pct", round2(s.low_pct)},
          {"high_pct", round2(s.high_pct)},
          {"samples", s.samples},
          {"basis", s.basis}};
}

}  // namespace

int64_t band_low(int64_t bytes, const ErrorSpread& spread) {
  return scaled(bytes, spread.high_pct);
}
int64_t band_high(int64_t bytes, const ErrorSpread& spread) {
  return scaled(bytes, spread.low_pct);
}

Result<UncertaintyBands> parse_bands(std::string_view json_text) {
  const json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Error{"uncertainty", "", "a JSON object", "data/uncertainty.json is not valid JSON"};
  UncertaintyBands b;
  const std::pair<const char*, ErrorSpread*> parts[] = {{"model_states", &b.model_states},
                                                        {"activations", &b.activations},
                                                        {"reserved", &b.reserved},
                                                        {"device", &b.device}};
  for (const auto& [key, target] : parts) {
    Result<ErrorSpread> s = spread_of(j, key);
    if (!s) return s.error();
    *target = std::move(s).value();
  }
  return b;
}

json bands_to_json(const UncertaintyBands& b) {
  return {{"model_states", spread_json(b.model_states)},
          {"activations", spread_json(b.activations)},
          {"reserved", spread_json(b.reserved)},
          {"device", spread_json(b.device)}};
}

const UncertaintyBands& builtin_bands() {
  static const UncertaintyBands bands = [] {
    for (const EmbeddedFile& f : embedded_files())
      if (std::string_view(f.path) == "uncertainty.json")
        if (Result<UncertaintyBands> b = parse_bands(f.text()); b.ok()) return *b;
    return UncertaintyBands{};  // a broken file is caught by uncertainty_test
  }();
  return bands;
}

}  // namespace vramplan
