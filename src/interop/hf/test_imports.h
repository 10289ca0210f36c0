// Helpers for the import tests of the HF stack: fixtures, the keys an import listed, estimates.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "vramplan/interop/import.h"
#include "vramplan/io/estimate_request.h"

namespace vramplan::test_imports {

inline std::string fixture(const std::string& path) {
  std::ifstream in(std::string(VRAMPLAN_SOURCE_DIR) + "/tests/fixtures/imports/" + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool ignored_as(const Imported& i, const std::string& key, const std::string& reason) {
  return std::any_of(i.ignored.begin(), i.ignored.end(), [&](const IgnoredKey& k) {
    return k.key == key && k.reason.find(reason) != std::string::npos;
  });
}

inline bool understood(const Imported& i, const std::string& key, const std::string& setting) {
  return std::any_of(i.understood.begin(), i.understood.end(), [&](const UnderstoodKey& k) {
    return k.key == key && k.setting.find(setting) != std::string::npos;
  });
}

inline bool warned(const Imported& i, const std::string& text) {
  return std::any_of(i.warnings.begin(), i.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// The peak (allocated, reserved) of `settings`, or (-1, -1) with a test failure.
inline std::pair<int64_t, int64_t> peak(const nlohmann::json& settings) {
  Result<SettingsEstimate> e = estimate_settings(settings, nullptr);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  if (!e.ok()) return {-1, -1};
  return {e->estimate.peak.allocated_bytes, e->estimate.peak.reserved_bytes};
}

}  // namespace vramplan::test_imports
