// Typed reading of config.json fields, with errors that name the key as the file spells it.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "vramplan/base/error.h"

namespace vramplan::hf {

using nlohmann::json;

inline constexpr size_t kShownChars = 40;  // values quoted in errors are cut to this length

inline std::string shorten(std::string text) {
  if (text.size() > kShownChars) {
    text.resize(kShownChars);
    text += "...";
  }
  return text;
}

inline std::string show(const json& value) {
  return shorten(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

inline std::string range_text(int64_t min) {
  return min >= 1 ? "a positive integer" : "a non-negative integer";
}

// Fields: typed access to one JSON object. The first error is latched and later reads return
// defaults, so that readers stay straight-line code instead of checking after every field.

class Fields {
 public:
  Fields(const json& object, std::string prefix, const json* defaults)
      : object_(object), prefix_(std::move(prefix)), defaults_(defaults) {}

  std::string field(std::string_view key) const { return prefix_ + std::string(key); }
  // The object itself as a field: "config" or "config.text_config".
  std::string scope() const { return prefix_.substr(0, prefix_.size() - 1); }

  // The value of `key`, falling back to the family defaults; nullptr when absent or null.
  const json* get(std::string_view key) const {
    const json* value = find(object_, key);
    if (value == nullptr && defaults_ != nullptr) value = find(*defaults_, key);
    return value;
  }
  bool has(std::string_view key) const { return get(key) != nullptr; }

  // An integer >= min, or nullopt when absent or null.
  std::optional<int64_t> integer(std::string_view key, int64_t min = 1) {
    const json* value = get(key);
    if (value == nullptr || error_) return std::nullopt;
    std::optional<int64_t> number = as_integer(*value);
    if (!number || *number < min) {
      fail({field(key), show(*value), range_text(min), ""});
      return std::nullopt;
    }
    return number;
  }

  int64_t integer_or(std::string_view key, int64_t fallback, int64_t min = 1) {
    return integer(key, min).value_or(fallback);
  }

  // The first of `keys` that is present; an error naming the first key when none is.
  int64_t required(std::initializer_list<std::string_view> keys, int64_t min = 1) {
    for (std::string_view key : keys) {
      if (has(key)) return integer(key, min).value_or(0);
    }
    std::string_view key = *keys.begin();
    fail({field(key), object_.contains(key) ? "null" : "missing", range_text(min),
          "required by this model_type"});
    return 0;
  }

  bool boolean(std::string_view key, bool fallback) {
    const json* value = get(key);
    if (value == nullptr || error_) return fallback;
    if (!value->is_boolean()) {
      fail({field(key), show(*value), "true or false", ""});
      return fallback;
    }
    return value->get<bool>();
  }

  std::optional<std::string> string(std::string_view key) {
    const json* value = get(key);
    if (value == nullptr || error_) return std::nullopt;
    if (!value->is_string()) {
      fail({field(key), show(*value), "a string", ""});
      return std::nullopt;
    }
    return value->get<std::string>();
  }

  void fail(Error error) {
    if (!error_) error_ = std::move(error);
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  static const json* find(const json& object, std::string_view key) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }

  // Accepts JSON integers and integral floats ("4096.0"); sizes are never fractional.
  static std::optional<int64_t> as_integer(const json& value) {
    if (value.is_number_integer()) {
      if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) {
        return std::nullopt;
      }
      return value.get<int64_t>();
    }
    if (value.is_number_float()) {
      double number = value.get<double>();
      // Beyond 2^62 the value is absurd anyway; validate_model explains the real bounds.
      if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 0x1p62) {
        return static_cast<int64_t>(number);
      }
    }
    return std::nullopt;
  }

  const json& object_;
  std::string prefix_;
  const json* defaults_;
  std::optional<Error> error_;
};

}  // namespace vramplan::hf
