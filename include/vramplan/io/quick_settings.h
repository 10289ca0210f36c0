// Settings in, quick calculation out (docs/quick.md): the one pipeline `vramplan quick` and the
// server's POST /api/quick share, so both return the same JSON. Beside the coarse rows it runs the
// full estimate of the matching architecture (`vramplan estimate` or `vramplan infer` on a
// Llama-2-shaped config of those layers and hidden size) so users see what the coarse formula
// leaves out.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/quick/quick.h"

namespace vramplan {

// A shipped scenario, runnable by name (--example NAME).
struct QuickExample {
  const char* name;       // "medium-training"
  const char* title;      // "medium transformer training"
  const char* settings;   // the settings as a JSON object's text
  double calculator_gib;  // what the calculator these come from reports for it
};
std::span<const QuickExample> quick_examples();

// "700M", "1.3B", "1300M", "2T", "7e8", "700000000" (or a JSON number) -> parameters. Errors
// name `field` with the value and the accepted forms.
Result<int64_t> parse_param_count(const std::string& field, const nlohmann::json& value);

// The settings (keys of quick_options(); an "example" fills in its settings first) as inputs.
Result<QuickInputs> resolve_quick(const nlohmann::json& settings);

// The full vramplan estimate of the matching architecture at the same settings.
struct QuickFull {
  std::string model;        // "Llama-2 shape, 32 layers × 4096"
  std::string command;      // "estimate" or "infer"
  int64_t parameters = 0;   // of the matching architecture
  int64_t total_bytes = 0;  // peak per GPU as nvidia-smi shows it (device)
  int64_t allocated_bytes = 0;
  std::vector<Row> rows;    // the full estimate's rows at its peak
  nlohmann::json settings;  // the scenario to run it yourself (--scenario FILE)
};

struct QuickAnswer {
  std::string example;  // "" when none
  QuickInputs inputs;
  QuickEstimate estimate;
  std::optional<double> calculator_gib;  // for an example
  std::optional<QuickFull> full;         // absent when the matching architecture has no estimate
  std::vector<std::string> notes;        // why not, and other remarks
};

// resolve_quick -> quick_estimate -> the full estimate. Pure and thread-safe.
Result<QuickAnswer> quick_settings(const nlohmann::json& settings);

}  // namespace vramplan
