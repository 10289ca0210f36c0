// Reading a run as the user wrote it for their framework: a Megatron-LM launch script or argument
// list, a Megatron functional-test or Megatron-Bridge / NeMo recipe YAML, a torchtitan job TOML,
// a DeepSpeed JSON with HF TrainingArguments or an accelerate config, a torchtune or axolotl
// recipe, a vLLM or SGLang command line. Each becomes vramplan settings (the keys of
// vramplan/io/options.h), with every key of the file listed as understood or ignored.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"

namespace vramplan {

// What an import is for: a training scenario (estimate, plan) or a serving one (infer).
enum class ImportKind { kTraining, kServing };

struct ImportFormat {
  const char* name;  // "megatron", "torchtitan", ... (--from-format)
  ImportKind kind;
  const char* what;  // "Megatron-LM launch command, script or argument list"
};

// Every format, in the order detection tries them.
std::span<const ImportFormat> import_formats();

// A key of the file and what vramplan made of it.
struct UnderstoodKey {
  std::string key;      // as the file writes it: "--tensor-model-parallel-size", "parallelism.tp"
  std::string value;    // as the file writes it
  std::string setting;  // what it set: "tp = 8"
};

struct IgnoredKey {
  std::string key;
  std::string value;
  std::string reason;  // "no effect on memory", "not modelled: ..."
};

struct Imported {
  std::string format;                                  // the format read
  nlohmann::json settings = nlohmann::json::object();  // vramplan keys
  std::vector<UnderstoodKey> understood;
  std::vector<IgnoredKey> ignored;
  std::vector<std::string> warnings;  // keys that change memory which vramplan cannot honour
  // The file's key behind each setting, so that an error about a setting names the key the user
  // wrote ("--tensor-model-parallel-size", not "tp").
  std::map<std::string, std::string> key_of_setting;
};

// Files the text names but does not hold (a DeepSpeed JSON named by `--deepspeed ds.json`, the
// job TOML of `--job.config_file`, an accelerate `--config_file`, a torchtune `--config`): their
// texts by the name the text gives (the API's "from_files"; the CLI reads them beside --from).
using NamedFiles = std::map<std::string, std::string>;

// The format of `text` by its content, or nullptr when none is recognised.
const ImportFormat* detect_import_format(std::string_view text);

// Reads `text` as `format` (a name of import_formats(); empty: detected). Errors name the
// file's own key, its value and what is accepted; a text in no known format is an error naming
// "from" with the formats accepted. `beside`: the settings given beside the file (they still win
// over it); a format reads them where the file leaves a value to another tool (DeepSpeed's
// "auto" bucket sizes come from the model, its batch checks from the world size).
// `files`: the texts of files it names (a name not among them is listed as a warning, or is an
// error where the file is the whole run, as torchtitan's job TOML is).
Result<Imported> import_config(std::string_view text, std::string_view format = {},
                               const nlohmann::json& beside = nlohmann::json::object(),
                               const NamedFiles& files = {});

// The names of the files `text` refers to without holding them, as it writes them (what the CLI
// reads beside the --from file). Empty when the text is in no known format.
std::vector<std::string> files_named(std::string_view text, std::string_view format = {},
                                     const nlohmann::json& beside = nlohmann::json::object());

// Who asks: `estimate` and `plan` take training formats, `infer` serving ones; `plan` searches
// the layout, so the file's layout keys are listed as ignored (given beside the file, one fixes
// that dimension of the search as usual).
enum class ImportFor { kEstimate, kPlan, kInfer };

// The settings a request holds once its "from" text (with "from_format" and "from_files":
// {name: text} for the files it names) is imported: the file's
// settings, then every other key of `settings` on top (what the user gives beside the file
// wins). Without "from": `settings` unchanged and no Imported.
struct SettingsWithImport {
  nlohmann::json settings;
  std::optional<Imported> imported;
};
Result<SettingsWithImport> apply_from(const nlohmann::json& settings, ImportFor use);

// An Error about a setting, renamed to the file's key when the setting came from the file and
// the user did not give it beside the file (`given`: the settings as the user gave them).
Error name_as_imported(Error error, const Imported& imported, const nlohmann::json& given);

// {format, settings (what the file set, in vramplan's keys: a form can be filled from them),
// understood [{key, value, setting}], ignored [{key, value, reason}], warnings}.
nlohmann::json imported_to_json(const Imported& imported);

}  // namespace vramplan
