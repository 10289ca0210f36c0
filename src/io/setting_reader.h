// Reading settings (scenario files, API bodies, CLI flags as text): each value may be typed (3,
// true) or text ("3", "on"), and every error names the key, the value and what is accepted.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "base/text.h"
#include "vramplan/base/error.h"
#include "vramplan/io/options.h"
#include "vramplan/model/precision.h"
#include "vramplan/model/vision_shape.h"

namespace vramplan {

// A value as an error message quotes it: strings as they are, anything else as JSON.
std::string setting_text(const nlohmann::json& value);

// The first key of `settings` that `options` lacks, as an error listing the accepted keys
// ("one of the <kind> keys: ..."), or nothing.
std::optional<Error> unknown_setting(const nlohmann::json& settings,
                                     std::span<const OptionSpec> options, const char* kind);

// images and image_size (--images, --image-size) into `out`, for training and serving alike.
std::optional<Error> read_images(const nlohmann::json& settings, Images& out);

// Typed readers over one settings object. An absent or null key leaves `out` unchanged.
class SettingReader {
 public:
  explicit SettingReader(const nlohmann::json& settings) : settings_(settings) {}
  bool has(const char* key) const { return settings_.contains(key) && !settings_[key].is_null(); }

  std::optional<Error> integer(const char* key, int64_t& out) const;
  std::optional<Error> number(const char* key, double& out) const;
  std::optional<Error> boolean(const char* key, bool& out) const;
  std::optional<Error> text(const char* key, std::string& out) const;
  std::optional<Error> dtype(const char* key, DType& out) const;

  // Picks one of `names` (lower-case) and stores its index, i.e. the enum value, in `out`.
  template <class Enum, size_t N>
  std::optional<Error> choice(const char* key, const std::array<const char*, N>& names,
                              Enum& out) const {
    std::string s;
    if (auto e = text(key, s)) return e;
    if (!has(key)) return std::nullopt;
    const std::string wanted = to_lower(s);
    std::string accepted;
    for (size_t i = 0; i < N; ++i) {
      if (wanted == names[i]) {
        out = static_cast<Enum>(i);
        return std::nullopt;
      }
      accepted += (i ? ", " : "") + std::string(names[i]);
    }
    return Error{key, s, accepted, ""};
  }

 private:
  const nlohmann::json& settings_;
};

}  // namespace vramplan
