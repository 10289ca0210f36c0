// What every importer writes into: the settings it derives, and every key of the user's file as
// understood (with the setting it made) or ignored (with why), so that nothing is dropped
// silently.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/interop/import.h"

namespace vramplan::interop {

// Reasons shared by the importers.
inline constexpr const char* kNoMemoryEffect = "no effect on memory";
inline constexpr const char* kNotModelled = "not modelled: ";

class ImportBuilder {
 public:
  explicit ImportBuilder(std::string format) { out_.format = std::move(format); }

  // `key` (as the file writes it) with `value` set `setting` to `json_value`; a later key that
  // sets the same setting replaces it.
  void set(std::string_view key, std::string_view value, const std::string& setting,
           nlohmann::json json_value);
  // A setting several keys made together (each listed as understood on its own), e.g. the model
  // from its shape arguments; errors about it name `key`.
  void put(const std::string& setting, nlohmann::json value, std::string key) {
    out_.settings[setting] = std::move(value);
    out_.key_of_setting[setting] = std::move(key);
  }
  // `key` was read and shapes a setting another key sets (e.g. a recompute method beside its
  // granularity): listed as understood with `what` it did.
  void understood(std::string_view key, std::string_view value, std::string what);
  void ignore(std::string_view key, std::string_view value, std::string reason);
  // A key that changes memory in a way vramplan cannot honour: ignored, and a warning.
  void unsupported(std::string_view key, std::string_view value, const std::string& why);
  void warn(std::string text) { out_.warnings.push_back(std::move(text)); }

  bool has(const std::string& setting) const { return out_.settings.contains(setting); }
  // The file's key that made `setting` ("" when none did).
  std::string key_of(const std::string& setting) const {
    auto it = out_.key_of_setting.find(setting);
    return it == out_.key_of_setting.end() ? "" : it->second;
  }
  const nlohmann::json& get(const std::string& setting) const { return out_.settings[setting]; }
  // Removes a setting made earlier (e.g. when a later key decides it does not apply).
  void drop(const std::string& setting) { out_.settings.erase(setting); }

  Imported finish() { return std::move(out_); }

 private:
  Imported out_;
};

// The text of a JSON, YAML or TOML scalar as the user would write it.
std::string value_text(const nlohmann::json& value);

// Integer and boolean values as configs write them ("8", 8, "true", "True", true, "1"); errors
// name `key` as the file writes it.
Result<int64_t> integer_value(std::string_view key, const nlohmann::json& value);
Result<bool> bool_value(std::string_view key, const nlohmann::json& value);
Result<double> number_value(std::string_view key, const nlohmann::json& value);

}  // namespace vramplan::interop
