// Megatron-LM's own forms: a launch command or shell script (torchrun ... pretrain_gpt.py
// --tensor-model-parallel-size ...; variables and arrays set in the script expanded), a bare
// argument list, and the functional tests' model_config.yaml (MODEL_ARGS).
#include "interop/megatron/megatron_import.h"

#include <fmt/format.h>

#include "interop/launcher.h"
#include "interop/megatron/megatron_args.h"
#include "interop/shell_words.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

std::string basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Megatron-LM's training entry points: pretrain_gpt.py and its siblings.
bool is_megatron_program(const std::string& word) {
  const std::string name = basename(word);
  return name.size() > 3 && name.rfind("pretrain_", 0) == 0 && name.ends_with(".py");
}

void list_unexpanded(const ShellScript& script, ImportBuilder& out) {
  for (const std::string& u : script.unexpanded)
    out.warn("the script's " + u + " was not expanded: vramplan runs nothing");
}

}  // namespace

bool looks_like_megatron_command(std::string_view text) {
  const ShellScript script = parse_shell(text);
  if (find_launched(script, is_megatron_program)) return true;
  // A bare argument list: the first word is an option and Megatron's own names appear.
  const size_t first = text.find_first_not_of(" \t\r\n\\");
  return first != std::string_view::npos && text.substr(first, 2) == "--" &&
         (text.find("--tensor-model-parallel-size") != std::string_view::npos ||
          text.find("--num-layers") != std::string_view::npos ||
          text.find("--micro-batch-size") != std::string_view::npos);
}

Result<Imported> import_megatron_command(std::string_view text) {
  ImportBuilder out("megatron");
  const ShellScript script = parse_shell(text);
  std::optional<LaunchedCommand> launched = find_launched(script, is_megatron_program);
  std::vector<std::string> words;
  int64_t world = 0;
  std::string world_from;
  if (launched) {
    words.assign(launched->program.begin() + 1, launched->program.end());
    world = launched->world_size;
    world_from = launched->world_size_from;
    out.understood(launched->program.front(), "", "Megatron-LM training entry point");
  } else {
    for (const ShellCommand& c : script.commands)
      words.insert(words.end(), c.words.begin(), c.words.end());
  }
  std::vector<std::string> rest;
  const MegatronArgs args = megatron_args_from_words(words, &rest);
  if (args.empty())
    return Error{"from", std::string(text.substr(0, 60)),
                 "a Megatron-LM launch command, script or argument list (--num-layers ...)",
                 "no Megatron argument found"};
  for (const std::string& w : rest) out.ignore(w, "", "not a Megatron argument");
  list_unexpanded(script, out);
  if (auto e = import_megatron_args(args, world, world_from, out)) return *e;
  return out.finish();
}

bool looks_like_megatron_test_yaml(const json& doc) {
  return doc.is_object() && doc.contains("MODEL_ARGS") && doc["MODEL_ARGS"].is_object();
}

Result<Imported> import_megatron_test_yaml(const json& doc) {
  ImportBuilder out("megatron-yaml");
  MegatronArgs args;
  for (auto it = doc["MODEL_ARGS"].begin(); it != doc["MODEL_ARGS"].end(); ++it) {
    const json& v = it.value();
    if (v.is_boolean() && !v.get<bool>()) {
      out.ignore("MODEL_ARGS." + it.key(), "false", "a flag set to false is not given");
      continue;
    }
    args.push_back({it.key(), v.is_boolean() ? "true" : value_text(v)});
  }
  // The functional tests run on one node of 8 GPUs unless the file says otherwise.
  int64_t world = 8;
  std::string world_from = "(a functional test: one node of 8 GPUs)";
  if (const json* gpus = doc.contains("GPUS_PER_NODE") ? &doc["GPUS_PER_NODE"] : nullptr) {
    Result<int64_t> n = integer_value("GPUS_PER_NODE", *gpus);
    if (!n) return n.error();
    world = *n;
    world_from = "GPUS_PER_NODE";
  }
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "MODEL_ARGS" && it.key() != "GPUS_PER_NODE")
      out.ignore(it.key(), value_text(it.value()), kNoMemoryEffect);
  if (auto e = import_megatron_args(args, world, world_from, out)) return *e;
  return out.finish();
}

}  // namespace vramplan::interop
