// The settings flags shared by `estimate`, `infer`, `plan` and `roofline`: every key of an option
// table becomes a flag (--seq-len ⇄ "seq_len"; booleans also get --no-<flag>), and what the user
// typed is collected into the same key → value JSON a scenario file or an API request holds.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/io/options.h"

namespace vramplan::cli {

// A command's Args derive from this so that collect_settings can read them.
struct SettingsFlags {
  std::map<std::string, std::string> values;  // setting key -> text as typed
  std::map<std::string, CLI::Option*> options;
  std::map<std::string, bool> negated;  // --no-<flag> given
  std::string scenario_file;            // --scenario
};

// "<help> [choices] (default: …)"; the default is left out when with_default is false.
std::string setting_help(const OptionSpec& o, bool with_default = true);

// "INT", "NUM", "[BOOL]", "CHOICE" or "TEXT" for --help.
const char* setting_type_name(OptionKind kind);

// Registers --<key> (and --no-<key> for a boolean) in `group`; type_name nullptr keeps CLI11's.
CLI::Option* add_setting_flag(CLI::App& cmd, const OptionSpec& o, const std::string& help,
                              const std::string& group, SettingsFlags& flags,
                              const char* type_name = nullptr);

// How a command lists a registry's options in --help: under the group's title (group_title) with
// its default, unless the command says otherwise for an option.
struct FlagListing {
  std::function<std::string(const OptionSpec&)> title;  // empty: group_title(o.group)
  std::function<std::string(const OptionSpec&)> help;   // empty: setting_help(o)
};

// Registers every option of `options` (one of the registries of vramplan/io/options.h) as a flag,
// but inline objects, which come from scenario files and API bodies.
void add_setting_flags(CLI::App& cmd, std::span<const OptionSpec> options, SettingsFlags& flags,
                       const FlagListing& listing = {});

// The settings the user gave: the scenario file first, flags on top.
Result<nlohmann::json> collect_settings(const SettingsFlags& flags);

// --color auto|always|never, honouring NO_COLOR and whether stdout is a terminal.
bool use_color(const std::string& color);
// --width, else $COLUMNS (at least 40), else 100.
int terminal_width(int requested);

}  // namespace vramplan::cli
