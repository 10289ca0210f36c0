#include "cli/settings_flags.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli/commands.h"
#include "vramplan/interop/import.h"

namespace vramplan::cli {

std::string setting_help(const OptionSpec& o, bool with_default) {
  std::string text = o.help;
  if (o.kind == OptionKind::kChoice) text += fmt::format(" [{}]", o.choices);
  if (with_default && o.default_text[0] != '\0')
    text += fmt::format(" (default: {})", o.default_text);
  return text;
}

const char* setting_type_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::kInteger:
      return "INT";
    case OptionKind::kNumber:
      return "NUM";
    case OptionKind::kBool:
      return "[BOOL]";
    case OptionKind::kChoice:
      return "CHOICE";
    default:
      return "TEXT";
  }
}

CLI::Option* add_setting_flag(CLI::App& cmd, const OptionSpec& o, const std::string& help,
                              const std::string& group, SettingsFlags& flags,
                              const char* type_name) {
  const std::string key = o.key;
  CLI::Option* opt = cmd.add_option(flag_name(key), flags.values[key], help);
  opt->group(group);
  if (type_name) opt->type_name(type_name);
  if (o.kind == OptionKind::kBool) {
    opt->expected(0, 1);  // "--flag" alone means true
    cmd.add_flag(flag_name("no_" + key), flags.negated[key], "same as " + flag_name(key) + " false")
        ->group(group);
  }
  flags.options[key] = opt;
  return opt;
}

void add_setting_flags(CLI::App& cmd, std::span<const OptionSpec> options, SettingsFlags& flags,
                       const FlagListing& listing) {
  for (const OptionSpec& o : options) {
    if (o.kind == OptionKind::kObject) continue;
    add_setting_flag(cmd, o, listing.help ? listing.help(o) : setting_help(o),
                     listing.title ? listing.title(o) : std::string(group_title(o.group)), flags,
                     setting_type_name(o.kind));
  }
}

namespace {

std::filesystem::path directory_of(const std::string& path) {
  return path.empty() ? std::filesystem::path(".") : std::filesystem::path(path).parent_path();
}

// The files the --from text names (a DeepSpeed JSON, a job TOML, ...), read where the launch
// would find them: beside the --from file, else in the working directory. One that is in neither
// is left to the importer, which lists it as not read.
std::optional<Error> read_named_files(const std::string& from_path, nlohmann::json& settings) {
  // A from_format that is not text is left to the importer's own error naming it.
  const auto f = settings.find("from_format");
  const std::string format = f != settings.end() && f->is_string() ? f->get<std::string>() : "";
  nlohmann::json beside = settings;
  beside.erase("from");
  beside.erase("from_format");
  for (const std::string& name : files_named(settings["from"].get<std::string>(), format, beside)) {
    if (settings.contains("from_files") && settings["from_files"].is_object() &&
        settings["from_files"].contains(name))
      continue;
    for (const std::filesystem::path& dir : {directory_of(from_path), std::filesystem::path(".")}) {
      const std::filesystem::path candidate =
          std::filesystem::path(name).is_absolute() ? std::filesystem::path(name) : dir / name;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(candidate, ec)) continue;
      Result<std::string> text = read_text_file(candidate.string(), name);
      if (!text) return text.error();
      settings["from_files"][name] = std::move(text).value();
      break;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<nlohmann::json> collect_settings(const SettingsFlags& flags) {
  nlohmann::json settings = nlohmann::json::object();
  if (!flags.scenario_file.empty()) {
    Result<std::string> text = read_text_file(flags.scenario_file, "scenario");
    if (!text) return text.error();
    settings = nlohmann::json::parse(*text, nullptr, false);
    if (settings.is_discarded() || !settings.is_object())
      return Error{"scenario", flags.scenario_file,
                   "a JSON object of settings (keys as the flags, with underscores)",
                   "not a valid JSON object"};
  }
  for (const auto& [key, option] : flags.options) {
    if (option->count() == 0) continue;
    const std::string& value = flags.values.at(key);
    const bool bare_flag = value.empty() && option->get_expected_min() == 0;
    settings[key] = bare_flag ? "true" : value;  // only booleans may stand alone
  }
  // --from names a file (- for standard input); the settings hold its text, as API requests do,
  // and the files it names in from_files.
  if (settings.contains("from") && settings["from"].is_string()) {
    const std::string path = settings["from"].get<std::string>();
    Result<std::string> text =
        path == "-" ? read_standard_input("--from") : read_text_file(path, "--from");
    if (!text) return text.error();
    settings["from"] = std::move(text).value();
    if (auto e = read_named_files(path == "-" ? "" : path, settings)) return *e;
  }
  for (const auto& [key, given] : flags.negated)
    if (given) settings[key] = "false";
  return settings;
}

bool use_color(const std::string& color) {
  if (color == "always") return true;
  if (color == "never") return false;
  return isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
}

int terminal_width(int requested) {
  if (requested > 0) return requested;
  if (const char* columns = getenv("COLUMNS")) {
    const int w = atoi(columns);
    if (w >= 40) return w;
  }
  return 100;
}

}  // namespace vramplan::cli
