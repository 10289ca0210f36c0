#include "io/setting_reader.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "model/vision/image_tokens.h"

namespace vramplan {

using nlohmann::json;

std::string setting_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::optional<Error> unknown_setting(const json& settings, std::span<const OptionSpec> options,
                                     const char* kind) {
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    if (find_option(options, it.key()) != nullptr) continue;
    std::string all;
    for (const OptionSpec& o : options) all += (all.empty() ? "" : ", ") + std::string(o.key);
    return Error{key_as_written(it.key()), setting_text(it.value()),
                 std::string("one of the ") + kind + " keys: " + all, "unknown setting"};
  }
  return std::nullopt;
}

std::optional<Error> SettingReader::integer(const char* key, int64_t& out) const {
  if (!has(key)) return std::nullopt;
  const json& v = settings_[key];
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
    return std::nullopt;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
      out = static_cast<int64_t>(d);
      return std::nullopt;
    }
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty()) return std::nullopt;
    if (ec == std::errc::result_out_of_range)
      return Error{key, s, "an integer below 9,223,372,036,854,775,807", "too large"};
  }
  return Error{key, setting_text(v), "an integer", ""};
}

std::optional<Error> SettingReader::number(const char* key, double& out) const {
  if (!has(key)) return std::nullopt;
  const json& v = settings_[key];
  if (v.is_number())
    out = v.get<double>();
  else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) return Error{key, s, "a number", ""};
  } else {
    return Error{key, setting_text(v), "a number", ""};
  }
  if (!std::isfinite(out)) return Error{key, setting_text(v), "a finite number", ""};
  return std::nullopt;
}

std::optional<Error> SettingReader::boolean(const char* key, bool& out) const {
  if (!has(key)) return std::nullopt;
  const json& v = settings_[key];
  if (v.is_boolean()) {
    out = v.get<bool>();
    return std::nullopt;
  }
  const std::string s = to_lower(setting_text(v));
  if (s == "true" || s == "on" || s == "yes" || s == "1") {
    out = true;
    return std::nullopt;
  }
  if (s == "false" || s == "off" || s == "no" || s == "0") {
    out = false;
    return std::nullopt;
  }
  return Error{key, setting_text(v), "true or false (also on/off, yes/no, 1/0)", ""};
}

std::optional<Error> SettingReader::text(const char* key, std::string& out) const {
  if (!has(key)) return std::nullopt;
  const json& v = settings_[key];
  if (!v.is_string()) return Error{key, v.dump(), "a string", ""};
  out = v.get<std::string>();
  return std::nullopt;
}

std::optional<Error> SettingReader::dtype(const char* key, DType& out) const {
  std::string s;
  if (auto e = text(key, s)) return e;
  if (!has(key)) return std::nullopt;
  auto t = parse_dtype(s);
  if (!t) return Error{key, s, std::string(kDTypeChoices), "unknown dtype"};
  out = *t;
  return std::nullopt;
}

std::optional<Error> read_images(const nlohmann::json& settings, Images& out) {
  const SettingReader r(settings);
  if (auto e = r.integer("images", out.count)) return e;
  if (!r.has("image_size")) return std::nullopt;
  std::string text;
  if (auto e = r.text("image_size", text)) return e;
  Result<std::pair<int64_t, int64_t>> size = parse_image_size(text, "image_size");
  if (!size.ok()) return size.error();
  out.width = size->first;
  out.height = size->second;
  if (!r.has("images"))
    return Error{"image_size", text, "with images N (the images per sequence)",
                 "an image size without images sizes nothing"};
  return std::nullopt;
}

}  // namespace vramplan
