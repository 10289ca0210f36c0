// Building a Scenario from user settings: the CLI's flags, a scenario file, or an API request.
// All three are the same key → value map (keys are the CLI option names with underscores:
// --seq-len ⇄ "seq_len"), parsed and checked in one place so front ends cannot drift apart.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/interop/import.h"
#include "vramplan/io/framework_vocabulary.h"
#include "vramplan/io/options.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// Reads a config.json named by path (the CLI reads files; the server refuses paths).
using FileReader = std::function<Result<std::string>(const std::string& path)>;

// Returns the config.json text of a --model value that is neither a preset nor a path, e.g. a
// Hugging Face Hub id "org/name@revision" (the CLI passes the Hub client, src/hub; the core has
// no network code). Errors name the field "model".
using ModelFetcher = std::function<Result<std::string>(const std::string& model)>;

struct ResolvedScenario {
  Scenario scenario;
  std::string gpu;                        // catalog id ("" = none chosen)
  std::optional<double> gpu_memory_gib;   // a GPU of any other capacity
  std::optional<double> host_memory_gib;  // node RAM (else the catalog GPU's typical node)
  std::vector<std::string> warnings;      // model parsing notes, overridden preset fields, ...
  std::optional<Imported> imported;       // what "from" held, when the settings had it
  // Words of the user's settings read in a framework's vocabulary (framework_vocabulary.h); each
  // note is among the warnings too.
  std::vector<VocabularyNote> vocabulary;
};

// REQUIRES: settings is a JSON object. Values may be typed (3, true) or text ("3", "on"): the
// CLI passes text. Unknown keys, wrong types and unknown choices are errors naming the key.
// The layout itself is checked later, by estimate(). A "from" key (the text of a framework config
// or command line, vramplan/interop/import.h) is imported first; the other keys win over it, and
// errors about its settings name the file's keys.
// A --model value is, in this order: a preset name or its Hub id, a path (starts with / ./ ../ ~
// or contains .json), else passed to fetch_model when given.
Result<ResolvedScenario> resolve_scenario(const nlohmann::json& settings,
                                          const FileReader& read_file,
                                          const ModelFetcher& fetch_model = nullptr);

// --- Shared with the other scenario kinds (inference, see inference_io.h) ---

// The model part of `settings` (model, model_config and the architecture overrides), read and
// checked exactly as resolve_scenario reads it; other keys are ignored.
Result<ParsedModel> resolve_model(const nlohmann::json& settings, const FileReader& read_file,
                                  const ModelFetcher& fetch_model = nullptr);

// One setting read the way resolve_scenario reads them: the JSON type or its text form; an
// absent or null key leaves `out` unchanged; errors name the key.
std::optional<Error> read_integer_setting(const nlohmann::json& settings, const char* key,
                                          int64_t& out);
std::optional<Error> read_number_setting(const nlohmann::json& settings, const char* key,
                                         double& out);
std::optional<Error> read_bool_setting(const nlohmann::json& settings, const char* key, bool& out);
std::optional<Error> read_text_setting(const nlohmann::json& settings, const char* key,
                                       std::string& out);

}  // namespace vramplan
