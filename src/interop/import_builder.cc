#include "interop/import_builder.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace vramplan::interop {

using nlohmann::json;

void ImportBuilder::set(std::string_view key, std::string_view value, const std::string& setting,
                        json json_value) {
  out_.understood.push_back({std::string(key), std::string(value),
                             fmt::format("{} = {}", setting, value_text(json_value))});
  out_.settings[setting] = std::move(json_value);
  out_.key_of_setting[setting] = std::string(key);
}

void ImportBuilder::understood(std::string_view key, std::string_view value, std::string what) {
  out_.understood.push_back({std::string(key), std::string(value), std::move(what)});
}

void ImportBuilder::ignore(std::string_view key, std::string_view value, std::string reason) {
  out_.ignored.push_back({std::string(key), std::string(value), std::move(reason)});
}

void ImportBuilder::unsupported(std::string_view key, std::string_view value,
                                const std::string& why) {
  ignore(key, value, kNotModelled + why);
  out_.warnings.push_back(
      fmt::format("{} = {} changes memory, but vramplan does not model it: {}", key, value, why));
}

std::string value_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  // A file's bytes need not be UTF-8 (fuzzing found a list holding such a string): the default
  // dump throws on them; replace them instead.
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<int64_t> integer_value(std::string_view key, const json& value) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18)
      return static_cast<int64_t>(d);
  }
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    int64_t out = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty()) return out;
  }
  return Error{std::string(key), value_text(value), "an integer", ""};
}

Result<bool> bool_value(std::string_view key, const json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer() && (value == 0 || value == 1)) return value == 1;
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "on" || s == "1")
      return true;
    if (s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "off" || s == "0")
      return false;
  }
  return Error{std::string(key), value_text(value), "true or false", ""};
}

Result<double> number_value(std::string_view key, const json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d)) return d;
  }
  return Error{std::string(key), value_text(value), "a number", ""};
}

}  // namespace vramplan::interop
