// torchtitan's own forms: a job config TOML as torchtitan publishes them
// (torchtitan/models/llama3/train_configs/llama3_8b.toml; keys of 2024 and of 2025 alike), with
// an optional launch command in a comment for the world size, and a launch command carrying the
// whole job as overrides (`--section.key value`, torchtitan/config/manager.py).
#include "interop/torchtitan/torchtitan_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "interop/launcher.h"
#include "interop/shell_words.h"
#include "interop/structured_text.h"
#include "interop/torchtitan/torchtitan_job.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

std::string basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// torchtitan's entry points: `-m torchtitan.train`, torchtitan/train.py, ./run_train.sh.
bool is_torchtitan_program(const std::string& word) {
  return word == "torchtitan.train" || basename(word) == "run_train.sh" ||
         (word.find("torchtitan") != std::string::npos && basename(word) == "train.py");
}

struct Launch {
  std::optional<LaunchedCommand> command;
  int64_t world = 0;
  std::string world_from;
  std::map<std::string, std::string> variables;
};

// run_train.sh starts torchrun with --nproc_per_node=${NGPU:-8} (and CONFIG_FILE's job).
Launch launch_of(const ShellScript& script, const std::string& where) {
  Launch out;
  out.command = find_launched(script, is_torchtitan_program);
  out.variables = script.variables;
  if (!out.command) return out;
  out.world = out.command->world_size;
  out.world_from = out.command->world_size_from;
  if (basename(out.command->program.front()) == "run_train.sh" && out.world == 0) {
    auto it = script.variables.find("NGPU");
    const std::string ngpu = it == script.variables.end() ? "8" : it->second;
    Result<int64_t> n = integer_value("NGPU", json(ngpu));
    if (n && *n > 0) {
      out.world = *n;
      out.world_from = it == script.variables.end() ? "run_train.sh (its default NGPU=8)"
                                                    : "NGPU=" + ngpu + " run_train.sh";
    }
  }
  if (out.world > 0) out.world_from += where;
  return out;
}

// The comment lines of a TOML, as a script: a launch command written beside the job.
Launch launch_in_comments(std::string_view text) {
  std::istringstream lines{std::string(text)};
  std::string line, comments;
  while (std::getline(lines, line)) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] != '#') {
      comments += "\n";
      continue;
    }
    const size_t body = line.find_first_not_of("# \t", start);
    if (body != std::string::npos) comments += line.substr(body);
    comments += "\n";
  }
  const ShellScript script = parse_shell(comments);
  Launch out = launch_of(script, "");
  if (out.command) out.world_from += fmt::format(" (comment, line {})", out.command->line);
  return out;
}

// `--section.key value`, `--section.key=value`, `--section.flag` (true), `--section.no-flag`
// (false), several words: a list. Dashes in names are underscores.
Result<json> overrides_of(const std::vector<std::string>& words, ImportBuilder& out) {
  json doc = json::object();
  for (size_t i = 1; i < words.size(); ++i) {
    std::string w = words[i];
    if (w.rfind("--", 0) != 0 || w.find('.') == std::string::npos) {
      out.ignore(w, "", "not a torchtitan override (--section.key value)");
      continue;
    }
    std::string name = w.substr(2), value;
    json v;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      v = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      json list = json::array();
      while (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) list.push_back(words[++i]);
      v = list.empty() ? json(true) : (list.size() == 1 ? list[0] : list);
    }
    std::replace(name.begin(), name.end(), '-', '_');
    const size_t dot = name.rfind('.');
    if (v == json(true) && name.compare(dot + 1, 3, "no_") == 0) {
      name.erase(dot + 1, 3);
      v = false;
    }
    json* node = &doc;
    size_t start = 0;
    for (size_t d = name.find('.'); d != std::string::npos; d = name.find('.', start)) {
      json& child = (*node)[name.substr(start, d - start)];
      if (!child.is_object()) child = json::object();
      node = &child;
      start = d + 1;
    }
    (*node)[name.substr(start)] = v;
  }
  return doc;
}

// The job TOML a command names: --job.config_file (--job.config-file) or run_train.sh's
// CONFIG_FILE, with where it stands among the program's arguments (to drop it from the overrides).
struct NamedJob {
  std::string key, path;
  json job;
  size_t first_word = 0, word_count = 0;  // among the program's arguments
};

Result<std::optional<NamedJob>> named_job(const std::vector<std::string>& words,
                                          const Launch& launch, const NamedFileLookup& files) {
  NamedJob named;
  if (basename(words.front()) == "run_train.sh") {
    auto it = launch.variables.find("CONFIG_FILE");
    named.key = "CONFIG_FILE";
    named.path = it != launch.variables.end() ? it->second
                                              : "./torchtitan/models/llama3/train_configs/"
                                                "debug_model.toml";
  }
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i].rfind("--job.config_file", 0) != 0 && words[i].rfind("--job.config-file", 0) != 0)
      continue;
    const size_t eq = words[i].find('=');
    named.key = words[i].substr(0, eq);
    named.first_word = i - 1;
    named.word_count = eq == std::string::npos && i + 1 < words.size() ? 2 : 1;
    named.path = eq != std::string::npos ? words[i].substr(eq + 1)
                 : i + 1 < words.size()  ? words[i + 1]
                                         : "";
    break;
  }
  if (named.key.empty()) return std::optional<NamedJob>();
  const std::string* text = files.find(named.path);
  if (text == nullptr)
    return Error{named.key, named.path,
                 "the job config TOML given with the command (the CLI reads it beside the --from "
                 "file, the API takes it in from_files), or the TOML itself as --from",
                 "the command runs the job that file holds"};
  Result<json> toml = parse_toml(*text, named.key);
  if (!toml) return toml.error();
  named.job = std::move(toml).value();
  return std::optional<NamedJob>(std::move(named));
}

}  // namespace

bool looks_like_torchtitan_toml(const json& toml) {
  if (!toml.is_object()) return false;
  if (at_path(toml, "model.flavor") != nullptr) return true;
  const bool sections = toml.contains("activation_checkpoint") || toml.contains("parallelism") ||
                        toml.contains("experimental") || toml.contains("float8");
  return toml.contains("job") && toml.contains("training") && sections;
}

Result<Imported> import_torchtitan_toml(std::string_view text, const json& toml) {
  ImportBuilder out("torchtitan");
  const Launch launch = launch_in_comments(text);
  if (launch.command)
    out.understood(launch.command->program.front(), "", "torchtitan's launch command (a comment)");
  if (auto e = import_torchtitan_document(toml, launch.world, launch.world_from, out)) return *e;
  return out.finish();
}

bool looks_like_torchtitan_command(std::string_view text) {
  return find_launched(parse_shell(text), is_torchtitan_program).has_value();
}

Result<Imported> import_torchtitan_command(std::string_view text, const NamedFileLookup& files) {
  ImportBuilder out("torchtitan-command");
  const ShellScript script = parse_shell(text);
  const Launch launch = launch_of(script, "");
  if (!launch.command)
    return Error{"from", std::string(text.substr(0, 60)),
                 "a torchtitan launch command (torchrun ... -m torchtitan.train ...)",
                 "no torchtitan entry point found"};
  std::vector<std::string> words = launch.command->program;
  Result<std::optional<NamedJob>> named = named_job(words, launch, files);
  if (!named) return named.error();
  out.understood(words.front(), "", "torchtitan's training entry point");
  for (const std::string& u : script.unexpanded)
    out.warn("the command's " + u + " was not expanded: vramplan runs nothing");
  json doc = json::object();
  if (*named) {
    out.understood((*named)->key, (*named)->path, "the job config TOML it names");
    doc = std::move((*named)->job);
    words.erase(words.begin() + 1 + (*named)->first_word,
                words.begin() + 1 + (*named)->first_word + (*named)->word_count);
  }
  Result<json> overrides = overrides_of(words, out);
  if (!overrides) return overrides.error();
  doc.merge_patch(*overrides);  // the command line wins over the file, as ConfigManager does
  if (auto e = import_torchtitan_document(doc, launch.world, launch.world_from, out)) return *e;
  return out.finish();
}

std::optional<Error> import_torchtitan_document(const json& doc, int64_t world_size,
                                                const std::string& world_from, ImportBuilder& out) {
  Result<TitanKeys> keys = TitanKeys::from_document(doc);
  if (!keys) return keys.error();
  TitanJob job(std::move(keys).value(), out, world_size, world_from);
  return read_titan_job(job);
}

}  // namespace vramplan::interop
