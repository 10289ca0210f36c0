// The model presets shipped with vramplan: every config.json under data/models, compiled in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vramplan {

struct Preset {
  std::string name;         // file name without .json, e.g. "Llama-3.1-8B"
  std::string hub_id;       // e.g. "meta-llama/Llama-3.1-8B" (empty when unknown)
  std::string_view config;  // the config.json text
};

// All presets, sorted by name.
const std::vector<Preset>& presets();

// Finds a preset by file name (case-insensitive) or by Hub id (case-insensitive).
// Returns nullptr when none matches.
const Preset* find_preset(std::string_view name_or_hub_id);

}  // namespace vramplan
