#include "interop/hf/hf_formats.h"

#include <fmt/format.h>

#include "interop/hf/hf_run.h"
#include "interop/hf/hf_script.h"
#include "interop/shell_words.h"
#include "interop/structured_text.h"

namespace vramplan::interop::hf {
namespace {

using nlohmann::json;

}  // namespace

bool is_shell(const Document& d) {
  if (d.json || d.toml) return false;
  if (!d.yaml || !d.yaml->is_object()) return true;
  for (auto it = d.yaml->begin(); it != d.yaml->end(); ++it)
    if (it.key().find(' ') == std::string::npos) return false;
  return true;
}

namespace {

// A file's text as an object: JSON, else YAML; nullopt when it is neither.
std::optional<json> parse_object(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object()) return parsed;
  if (Result<json> yaml = parse_yaml(text, "from"); yaml && yaml->is_object()) return *yaml;
  return std::nullopt;
}

// A bare argument list: "--per_device_train_batch_size 4 --bf16 ...".
std::optional<json> bare_flags(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n\\");
  if (first == std::string_view::npos || text.substr(first, 2) != "--") return std::nullopt;
  std::vector<std::string> words;
  for (const ShellCommand& c : parse_shell(text).commands)
    words.insert(words.end(), c.words.begin(), c.words.end());
  return flags_document(program_arguments(words, nullptr));
}

int64_t per_node(const std::map<std::string, std::string>& options) {
  for (const char* name : {"--nproc_per_node", "--nproc-per-node", "--num_gpus", "--num-gpus"})
    if (auto it = options.find(name); it != options.end())
      return std::strtoll(it->second.c_str(), nullptr, 10);
  return 0;
}

// What a launch script holds, parsed, kept alive while it is read.
struct ScriptDocs {
  json trainer, trainer_file, deepspeed, accelerate;
  HfDocs docs;
};

// The program's arguments: flags, and a TrainingArguments file passed by path.
void trainer_of(const HfLaunch& launch, ScriptDocs& s, ImportBuilder& out) {
  std::vector<std::string> rest;
  const std::vector<std::string> args(launch.command.program.begin() + 1,
                                      launch.command.program.end());
  s.trainer = flags_document(program_arguments(args, &rest));
  s.docs.trainer = &s.trainer;
  s.docs.trainer_prefix = "--";
  for (const std::string& word : rest) {
    const bool file = word.ends_with(".json") || word.ends_with(".yaml") || word.ends_with(".yml");
    const std::string* text = file ? written_file(launch, word) : nullptr;
    std::optional<json> doc = text ? parse_object(*text) : std::nullopt;
    if (doc && s.trainer.empty()) {
      s.trainer_file = std::move(*doc);
      s.docs.trainer = &s.trainer_file;
      s.docs.trainer_prefix = "";
      out.understood(word, "", "the TrainingArguments file the script writes");
    } else if (file) {
      s.docs.missing.push_back({word, "(TrainingArguments file)"});
    } else if (word != "sft") {
      out.ignore(word, "", "not an argument of the training script");
    }
  }
}

// A config file an argument names: the here-document the script writes, else missing.
const json* config_named(const HfLaunch& launch, const std::string& key, const std::string& path,
                         json& into, HfDocs& docs) {
  const std::string* text = written_file(launch, path);
  std::optional<json> doc = text ? parse_object(*text) : std::nullopt;
  if (!doc) {
    docs.missing.push_back({key, path});
    return nullptr;
  }
  into = std::move(*doc);
  return &into;
}

void deepspeed_of(const HfLaunch& launch, ScriptDocs& s) {
  const json& t = *s.docs.trainer;
  for (const char* name : {"deepspeed_config", "deepspeed"}) {
    if (!t.contains(name) || t[name].is_object()) continue;
    const std::string path = value_text(t[name]);
    if (path == "true" || path.empty()) continue;
    const std::string key = s.docs.trainer_prefix + name;
    s.docs.deepspeed = config_named(launch, key, path, s.deepspeed, s.docs);
    // The reader of the TrainingArguments takes the key; the file is read here.
    return;
  }
}

void accelerate_of(const HfLaunch& launch, ScriptDocs& s) {
  const std::map<std::string, std::string> options = launcher_options(launch.command.launcher);
  json config = json::object();
  auto file = options.find("--config_file");
  if (file == options.end()) file = options.find("--config-file");
  if (file != options.end()) {
    if (const json* doc = config_named(launch, file->first, file->second, s.accelerate, s.docs))
      config = *doc;
  } else if (options.size() <= 1) {
    s.docs.missing.push_back({"accelerate launch", "(accelerate's default config)"});
  }
  s.accelerate = with_launch_flags(std::move(config), options, s.docs.accelerate_shown_as);
  s.docs.accelerate = &s.accelerate;
  const json* ds_file = at_path(s.accelerate, "deepspeed_config.deepspeed_config_file");
  if (ds_file != nullptr && !s.docs.deepspeed)
    s.docs.deepspeed = config_named(launch, "deepspeed_config.deepspeed_config_file",
                                    value_text(*ds_file), s.deepspeed, s.docs);
}

Result<Imported> read_script(const HfLaunch& launch, const std::string& format, const Document& d) {
  ImportBuilder out(format);
  const std::vector<std::string>& program = launch.command.program;
  out.understood(program.front(), "", "the training script (its arguments: TrainingArguments)");
  for (const std::string& u : launch.unexpanded)
    out.warn("the script's " + u + " was not expanded: vramplan runs nothing");
  ScriptDocs s;
  trainer_of(launch, s, out);
  deepspeed_of(launch, s);
  if (launch.launcher == Launcher::kAccelerate) accelerate_of(launch, s);
  s.docs.world = launch.command.world_size;
  s.docs.world_from = launch.command.world_size_from;
  s.docs.per_node = per_node(launcher_options(launch.command.launcher));
  s.docs.beside = d.beside;
  return import_hf_run(s.docs, std::move(out));
}

bool names_deepspeed(const HfLaunch& launch) {
  if (launch.launcher == Launcher::kDeepspeed) return true;
  for (const std::string& w : launch.command.program)
    if (w == "--deepspeed" || w.rfind("--deepspeed=", 0) == 0 || w == "--deepspeed_config")
      return true;
  return false;
}

std::optional<HfLaunch> shell_launch(const Document& d) {
  if (!is_shell(d)) return std::nullopt;
  std::optional<HfLaunch> launch = find_hf_launch(d.text);
  if (!launch || launch->launcher == Launcher::kTune) return std::nullopt;
  launch->named = d.files;
  return launch;
}

const json* structured(const Document& d) {
  return d.json ? &*d.json : d.yaml && d.yaml->is_object() ? &*d.yaml : nullptr;
}

Result<Imported> read_file_run(const Document& d, const std::string& format, HfDocs docs) {
  docs.beside = d.beside;
  return import_hf_run(docs, ImportBuilder(format));
}

}  // namespace

bool recognises_deepspeed(const Document& d) {
  if (d.json && looks_like_deepspeed_config(*d.json) && !looks_like_training_args(*d.json))
    return true;
  std::optional<HfLaunch> launch = shell_launch(d);
  return launch && launch->launcher != Launcher::kAccelerate && names_deepspeed(*launch);
}

Result<Imported> read_deepspeed(const Document& d) {
  if (std::optional<HfLaunch> launch = shell_launch(d)) return read_script(*launch, "deepspeed", d);
  const json* doc = structured(d);
  if (doc == nullptr)
    return Error{"from", std::string(d.text.substr(0, 60)),
                 "a DeepSpeed config JSON or a deepspeed launch script", "neither"};
  HfDocs docs;
  docs.deepspeed = doc;
  return read_file_run(d, "deepspeed", docs);
}

bool recognises_accelerate(const Document& d) {
  if (d.yaml && looks_like_accelerate_config(*d.yaml)) return true;
  std::optional<HfLaunch> launch = shell_launch(d);
  return launch && launch->launcher == Launcher::kAccelerate;
}

Result<Imported> read_accelerate(const Document& d) {
  if (std::optional<HfLaunch> launch = shell_launch(d))
    return read_script(*launch, "accelerate", d);
  const json* doc = structured(d);
  if (doc == nullptr)
    return Error{"from", std::string(d.text.substr(0, 60)),
                 "an accelerate config YAML or an accelerate launch script", "neither"};
  HfDocs docs;
  docs.accelerate = doc;
  return read_file_run(d, "accelerate", docs);
}

bool recognises_hf_trainer(const Document& d) {
  if (const json* doc = structured(d); doc && looks_like_training_args(*doc)) return true;
  if (!is_shell(d)) return false;
  if (std::optional<json> flags = bare_flags(d.text); flags && looks_like_training_args(*flags))
    return true;
  std::optional<HfLaunch> launch = shell_launch(d);
  if (!launch || launch->launcher == Launcher::kAccelerate) return false;
  const std::vector<std::string> args(launch->command.program.begin() + 1,
                                      launch->command.program.end());
  return looks_like_training_args(flags_document(program_arguments(args, nullptr)));
}

Result<Imported> read_hf_trainer(const Document& d) {
  if (is_shell(d)) {
    if (std::optional<HfLaunch> launch = shell_launch(d))
      return read_script(*launch, names_deepspeed(*launch) ? "deepspeed" : "hf-trainer", d);
    std::optional<json> flags = bare_flags(d.text);
    if (!flags)
      return Error{"from", std::string(d.text.substr(0, 60)),
                   "TrainingArguments as JSON, YAML, a --flag list or a launch command", "none"};
    HfDocs docs;
    docs.trainer = &*flags;
    docs.trainer_prefix = "--";
    return read_file_run(d, "hf-trainer", docs);
  }
  const json* doc = structured(d);
  if (doc == nullptr)
    return Error{"from", std::string(d.text.substr(0, 60)), "TrainingArguments", "none"};
  HfDocs docs;
  docs.trainer = doc;
  return read_file_run(d, "hf-trainer", docs);
}

}  // namespace vramplan::interop::hf
