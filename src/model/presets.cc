// Presets are the config.json files under data/models, compiled in by cmake/embed.cmake; their
// Hub ids come from data/hub_ids.json. Built once, on first use.
#include "vramplan/model/presets.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/embedded_data.h"
#include "base/text.h"

namespace vramplan {
namespace {

constexpr std::string_view kModelsDir = "models/";
constexpr std::string_view kConfigSuffix = ".json";
constexpr std::string_view kHubIdsFile = "hub_ids.json";

// Preset name -> Hub id. A damaged hub_ids.json only costs the ids, never the presets.
std::map<std::string, std::string, std::less<>> hub_ids() {
  std::map<std::string, std::string, std::less<>> ids;
  for (const EmbeddedFile& file : embedded_files()) {
    if (std::string_view(file.path) != kHubIdsFile) continue;
    auto json = nlohmann::json::parse(file.text(), nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) break;
    for (const auto& [name, id] : json.items()) {
      if (id.is_string()) ids[name] = id.get<std::string>();
    }
  }
  return ids;
}

std::vector<Preset> load_presets() {
  auto ids = hub_ids();
  std::vector<Preset> all;
  for (const EmbeddedFile& file : embedded_files()) {
    std::string_view path = file.path;
    if (!path.starts_with(kModelsDir) || !path.ends_with(kConfigSuffix)) continue;
    path.remove_prefix(kModelsDir.size());
    path.remove_suffix(kConfigSuffix.size());
    if (path.find('/') != std::string_view::npos) continue;  // only files directly in models/
    Preset preset{std::string(path), "", file.text()};
    if (auto id = ids.find(path); id != ids.end()) preset.hub_id = id->second;
    all.push_back(std::move(preset));
  }
  std::sort(all.begin(), all.end(),
            [](const Preset& a, const Preset& b) { return a.name < b.name; });
  return all;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = load_presets();
  return kPresets;
}

const Preset* find_preset(std::string_view name_or_hub_id) {
  for (const Preset& preset : presets()) {
    if (iequals(preset.name, name_or_hub_id) ||
        (!preset.hub_id.empty() && iequals(preset.hub_id, name_or_hub_id))) {
      return &preset;
    }
  }
  return nullptr;
}

}  // namespace vramplan
