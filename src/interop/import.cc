#include "vramplan/interop/import.h"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "base/utf8.h"
#include "interop/formats.h"
#include "interop/import_builder.h"
#include "vramplan/plan/planner.h"

namespace vramplan {
namespace {

using interop::Document;
using interop::FormatHandler;
using nlohmann::json;

// The longest text "from" may hold: launch scripts and configs are a few KiB.
constexpr size_t kMaxFromBytes = 1 << 20;

std::string format_names() {
  std::string names;
  for (const FormatHandler& h : interop::format_handlers())
    names += (names.empty() ? "" : ", ") + std::string(h.format.name);
  return names;
}

const FormatHandler* handler_named(std::string_view name) {
  for (const FormatHandler& h : interop::format_handlers())
    if (name == h.format.name) return &h;
  return nullptr;
}

const FormatHandler* recognised(const Document& doc) {
  for (const FormatHandler& h : interop::format_handlers())
    if (h.recognises(doc)) return &h;
  return nullptr;
}

Result<Imported> import_document(std::string_view text, std::string_view format, const json& beside,
                                 interop::NamedFileLookup files) {
  Document doc = interop::read_document(text);
  doc.beside = &beside;
  doc.files = files;
  const FormatHandler* h = nullptr;
  if (!format.empty()) {
    h = handler_named(format);
    if (h == nullptr) return Error{"from_format", std::string(format), format_names(), ""};
  } else {
    h = recognised(doc);
    if (h == nullptr)
      return Error{"from", std::string(text.substr(0, 60)),
                   "a config or command line of: " + format_names(),
                   "its format was not recognised (--from-format names it)"};
  }
  return h->read(doc);
}

// "from_files": {name: text}, as the API takes it (the CLI fills it from the files beside --from).
Result<NamedFiles> named_files_of(const json& settings) {
  NamedFiles files;
  if (!settings.contains("from_files") || settings["from_files"].is_null()) return files;
  const json& given = settings["from_files"];
  const char* accepted = "an object of file name to the file's text, for the files \"from\" names";
  if (!given.is_object())
    return Error{"from_files", given.dump().substr(0, 60), accepted, "not an object"};
  for (auto it = given.begin(); it != given.end(); ++it) {
    if (!it.value().is_string())
      return Error{"from_files." + it.key(), it.value().dump().substr(0, 60), accepted,
                   "not a string"};
    files[it.key()] = it.value().get<std::string>();
  }
  return files;
}

const char* kind_name(ImportKind k) { return k == ImportKind::kTraining ? "training" : "serving"; }

// Settings the user gave beside the file that replace a group of the file's settings.
void drop_replaced(json& from_file, const json& given, Imported& imported) {
  if (given.contains("model") || given.contains("model_config")) {
    for (const char* key : {"model", "model_config"})
      if (from_file.erase(key) > 0)
        imported.warnings.push_back(
            fmt::format("the model given beside the file replaces the file's ({})",
                        imported.key_of_setting.count(key) ? imported.key_of_setting[key] : key));
  }
}

// plan compares layouts at one global batch: the file's gradient accumulation, with its
// micro-batch and world size, is the global batch it trains with.
void global_batch_for_plan(json& merged, const json& given, Imported& imported) {
  if (!merged.contains("grad_accum") || given.contains("grad_accum")) return;
  const json accum = merged["grad_accum"];
  merged.erase("grad_accum");
  const std::string key = imported.key_of_setting["grad_accum"];
  if (merged.contains("global_batch") || given.contains("global_batch")) {
    imported.ignored.push_back({key, accum.dump(), "plan keeps the global batch given"});
    return;
  }
  // Typed or text (the CLI gives text), as the settings are read.
  auto count = [](const json& v) -> int64_t {
    Result<int64_t> n = interop::integer_value("", v);
    return n && *n > 0 && *n <= (int64_t{1} << 24) ? *n : 0;
  };
  const int64_t gpus = count(given.contains("gpus") ? given["gpus"] : merged.value("gpus", json()));
  const int64_t micro = count(given.contains("micro_batch") ? given["micro_batch"]
                                                            : merged.value("micro_batch", json(1)));
  const int64_t steps = count(accum);
  if (gpus == 0 || micro == 0 || steps == 0) {
    imported.ignored.push_back(
        {key, accum.dump(), "plan needs the global batch: give --global-batch (or --gpus)"});
    return;
  }
  const int64_t global = micro * steps * gpus;
  merged["global_batch"] = global;
  imported.key_of_setting["global_batch"] = key;
  imported.understood.push_back(
      {key, accum.dump(),
       fmt::format("global_batch = {} (micro-batch {} × {} steps × {} GPUs: plan compares layouts "
                   "at this global batch)",
                   global, micro, steps, gpus)});
}

}  // namespace

std::span<const ImportFormat> import_formats() {
  static const std::vector<ImportFormat> formats = [] {
    std::vector<ImportFormat> out;
    for (const FormatHandler& h : interop::format_handlers()) out.push_back(h.format);
    return out;
  }();
  return formats;
}

const ImportFormat* detect_import_format(std::string_view text) {
  const Document doc = interop::read_document(text);
  const FormatHandler* h = recognised(doc);
  return h ? &h->format : nullptr;
}

Result<Imported> import_config(std::string_view text, std::string_view format, const json& beside,
                               const NamedFiles& files) {
  if (text.size() > kMaxFromBytes)
    return Error{"from", fmt::format("{} bytes", text.size()), "at most 1 MiB of text", "too long"};
  // Every string read from the text goes into JSON: bytes that are not UTF-8 become U+FFFD here.
  NamedFiles valid;
  for (const auto& [name, body] : files) {
    if (body.size() > kMaxFromBytes)
      return Error{"from_files." + name, fmt::format("{} bytes", body.size()),
                   "at most 1 MiB of text", "too long"};
    valid[name] = valid_utf8(body);
  }
  return import_document(valid_utf8(text), format, beside, {&valid, nullptr});
}

std::vector<std::string> files_named(std::string_view text, std::string_view format,
                                     const json& beside) {
  if (text.size() > kMaxFromBytes) return {};
  std::set<std::string> asked;
  (void)import_document(valid_utf8(text), format, beside, {nullptr, &asked});
  return {asked.begin(), asked.end()};
}

Result<SettingsWithImport> apply_from(const json& settings, ImportFor use) {
  SettingsWithImport out{settings, std::nullopt};
  if (!settings.is_object() || !settings.contains("from") || settings["from"].is_null()) return out;
  const json& from = settings["from"];
  if (!from.is_string())
    return Error{"from", from.dump().substr(0, 60), "the text of a launch config or command line",
                 "not a string"};
  std::string format;
  if (settings.contains("from_format") && !settings["from_format"].is_null()) {
    if (!settings["from_format"].is_string())
      return Error{"from_format", settings["from_format"].dump(), format_names(), ""};
    format = settings["from_format"].get<std::string>();
  }
  Result<NamedFiles> files = named_files_of(settings);
  if (!files) return files.error();
  json given = settings;
  given.erase("from");
  given.erase("from_format");
  given.erase("from_files");
  Result<Imported> result = import_config(from.get<std::string>(), format, given, *files);
  if (!result) return result.error();
  Imported imported = std::move(result).value();
  const ImportFormat* f = nullptr;
  for (const ImportFormat& candidate : import_formats())
    if (imported.format == candidate.name) f = &candidate;
  const ImportKind wanted = use == ImportFor::kInfer ? ImportKind::kServing : ImportKind::kTraining;
  if (f != nullptr && f->kind != wanted)
    return Error{"from", imported.format,
                 fmt::format("a {} config for this command", kind_name(wanted)),
                 fmt::format("it is a {} config ({})", kind_name(f->kind), f->what)};
  json merged = imported.settings;
  drop_replaced(merged, given, imported);
  if (use == ImportFor::kPlan) {
    global_batch_for_plan(merged, given, imported);
    // The planner searches the layout: the file's layout is listed, not fixed.
    for (const char* key : kPlanLayoutKeys) {
      if (!merged.contains(key) || given.contains(key)) continue;
      imported.ignored.push_back({imported.key_of_setting[key], merged[key].dump(),
                                  fmt::format("plan searches {} (give it beside the file to fix "
                                              "it)",
                                              key)});
      merged.erase(key);
    }
  }
  for (auto it = given.begin(); it != given.end(); ++it) merged[it.key()] = it.value();
  out.settings = std::move(merged);
  out.imported = std::move(imported);
  return out;
}

Error name_as_imported(Error error, const Imported& imported, const json& given) {
  auto it = imported.key_of_setting.find(error.field);
  if (it == imported.key_of_setting.end()) return error;
  if (given.is_object() && given.contains(error.field)) return error;  // the user's own setting
  error.field = it->second;
  // The value as the file writes it ("op", not the "selective-op" it was read as).
  for (const UnderstoodKey& k : imported.understood)
    if (k.key == it->second && !k.value.empty() &&
        k.setting.find(" = " + error.value) != std::string::npos)
      error.value = k.value;
  return error;
}

json imported_to_json(const Imported& imported) {
  json understood = json::array(), ignored = json::array();
  for (const UnderstoodKey& k : imported.understood)
    understood.push_back({{"key", k.key}, {"value", k.value}, {"setting", k.setting}});
  for (const IgnoredKey& k : imported.ignored)
    ignored.push_back({{"key", k.key}, {"value", k.value}, {"reason", k.reason}});
  return {{"format", imported.format},
          {"settings", imported.settings},
          {"understood", std::move(understood)},
          {"ignored", std::move(ignored)},
          {"warnings", imported.warnings}};
}

}  // namespace vramplan
