#include "interop/megatron/megatron_recipe.h"

#include <fmt/format.h>

#include <map>

#include "interop/megatron/megatron_args.h"
#include "interop/shell_words.h"
#include "interop/structured_text.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

// The sections of a Megatron-Bridge ConfigContainer (megatron/bridge/training/config.py) and of
// NeMo's megatron_gpt_config.yaml that recipes write; comm_overlap is Bridge's CommOverlapConfig
// (megatron/bridge/training/comm_overlap.py: tp_comm_overlap, overlap_moe_expert_parallel_comm).
constexpr const char* kRecipeSections[] = {
    "model", "train",     "optimizer",  "ddp",    "dataset",   "mixed_precision", "trainer",
    "dist",  "scheduler", "checkpoint", "logger", "tokenizer", "comm_overlap"};

bool is_section(const std::string& name) {
  for (const char* s : kRecipeSections)
    if (name == s) return true;
  return false;
}

// Fields whose Megatron-LM argument is not the field's own name with dashes, or that turn a flag
// around (TransformerConfig's add_bias_linear: false is --disable-bias-linear).
struct Renamed {
  const char* field;
  const char* argument;
  bool when;  // the value that gives the flag (for booleans)
};
constexpr Renamed kRenamed[] = {
    {"num_moe_experts", "--num-experts", true},
    {"add_bias_linear", "--disable-bias-linear", false},
    {"share_embeddings_and_output_weights", "--untie-embeddings-and-output-weights", false},
    {"gated_linear_unit", "--swiglu", true},
    {"num_layers_in_first_pipeline_stage", "--decoder-first-pipeline-num-layers", true},
    {"num_layers_in_last_pipeline_stage", "--decoder-last-pipeline-num-layers", true},
    {"encoder_seq_length", "--seq-length", true},  // NeMo
    {"sequence_length", "--seq-length", true},
    {"activations_checkpoint_granularity", "--recompute-granularity", true},  // NeMo
    {"activations_checkpoint_method", "--recompute-method", true},
    {"activations_checkpoint_num_layers", "--recompute-num-layers", true},
    {"fp8_recipe", "--fp8-recipe", true},
    {"fp8", "--fp8-format", true},
    {"bias", "--disable-bias-linear", false},  // NeMo model.bias
    // DistributedDataParallelConfig's name for it.
    {"grad_reduce_in_fp32", "--accumulate-allreduce-grads-in-fp32", true},
    // The performance recipes' model-level switch for CommOverlapConfig's
    // overlap_moe_expert_parallel_comm (combined 1F1B).
    {"moe_a2a_overlap", "--overlap-moe-expert-parallel-comm", true},
};

std::string dashed(const std::string& field) {
  std::string out = "--" + field;
  for (char& c : out)
    if (c == '_') c = '-';
  return out;
}

class RecipeReader {
 public:
  explicit RecipeReader(std::string format) : out_(std::move(format)) {}

  // One leaf at `path` ("model.tensor_model_parallel_size").
  std::optional<Error> leaf(const std::string& path, const json& value) {
    const size_t dot = path.find('.');
    const std::string section = path.substr(0, dot);
    const std::string field = path.substr(path.rfind('.') + 1);
    if (auto e = special(path, section, field, value)) return e;
    if (handled_) return std::nullopt;
    if (value.is_null()) return ignore(path, "null", "not set");
    if (value.is_object()) return ignore(path, value.dump(), kNoMemoryEffect);
    if (value.is_array()) {
      // A list argument (nargs='+'), as Megatron's command line gives it: values by spaces.
      std::string joined;
      for (const json& v : value) {
        if (v.is_structured()) return ignore(path, value.dump(), kNoMemoryEffect);
        joined += (joined.empty() ? "" : " ") + value_text(v);
      }
      return add(path, dashed(field), joined);
    }
    std::string argument = dashed(field);
    bool flag_value = true;
    for (const Renamed& r : kRenamed)
      if (field == r.field) {
        argument = r.argument;
        flag_value = r.when;
      }
    if (value.is_boolean()) {
      if (value.get<bool>() != flag_value)
        return ignore(path, value_text(value), "the default: the flag is not given");
      return add(path, argument, "true");
    }
    return add(path, argument, value_text(value));
  }

  std::optional<Error> finish_into(int64_t world, const std::string& world_from) {
    if (auto e = import_megatron_args(args_, world, world_from, out_)) return rename(*e);
    return std::nullopt;
  }

  Imported imported() {
    Imported imported = out_.finish();
    for (UnderstoodKey& k : imported.understood) k.key = path_of(k.key);
    for (IgnoredKey& k : imported.ignored) k.key = path_of(k.key);
    for (auto& [setting, key] : imported.key_of_setting) key = path_of(key);
    for (const auto& [path, why] : ignored_) imported.ignored.push_back(why);
    return imported;
  }

  void note_ignored(const std::string& word, const std::string& why) {
    ignored_[word] = IgnoredKey{word, "", why};
  }

  int64_t devices = 0, nodes = 1;
  std::string devices_from;

 private:
  // Keys that are no Megatron argument of the same name.
  std::optional<Error> special(const std::string& path, const std::string& section,
                               const std::string& field, const json& value) {
    handled_ = true;
    if (field == "mixed_precision" || path == "mixed_precision" || field == "precision") {
      const std::string text = value_text(value);
      if (text.find("bf16") != std::string::npos) return add(path, "--bf16", "true");
      if (text.find("16") != std::string::npos) return add(path, "--fp16", "true");
      return ignore(path, text, "fp32 training: the default");
    }
    if (section == "trainer" && (field == "devices" || field == "num_nodes")) {
      Result<int64_t> n = integer_value(path, value);
      if (!n) return n.error();
      (field == "devices" ? devices : nodes) = *n;
      devices_from += (devices_from.empty() ? "" : " × ") + path;
      return std::nullopt;
    }
    if (path == "model.optim.name" && value_text(value) == "distributed_fused_adam")
      return add(path, "--use-distributed-optimizer", "true");  // NeMo's distributed optimizer
    if (field == "activation" && value_text(value).find("swiglu") != std::string::npos)
      return add(path, "--swiglu", "true");  // NeMo model.activation: fast-swiglu
    if (field == "activation_func")
      return ignore(path, value_text(value), "read with gated_linear_unit");
    handled_ = false;
    return std::nullopt;
  }

  std::optional<Error> add(const std::string& path, const std::string& argument,
                           const std::string& value) {
    for (MegatronArg& a : args_)
      if (a.name == argument) {  // a later key (an override) replaces an earlier one
        out_.understood(path_of_[argument], a.value,
                        a.value == value
                            ? fmt::format("{} {}, as {} gives it", argument, value, path)
                            : fmt::format("replaced by {} = {}", path, value));
        a.value = value;
        path_of_[argument] = path;
        return std::nullopt;
      }
    args_.push_back({argument, value});
    path_of_[argument] = path;
    return std::nullopt;
  }

  std::optional<Error> ignore(const std::string& path, const std::string& value,
                              const std::string& why) {
    ignored_[path] = IgnoredKey{path, value, why};
    return std::nullopt;
  }

  std::string path_of(const std::string& argument) const {
    const auto it = path_of_.find(argument);
    return it == path_of_.end() ? argument : it->second;
  }

  Error rename(Error e) const {
    e.field = path_of(e.field);
    return e;
  }

  ImportBuilder out_;
  MegatronArgs args_;
  std::map<std::string, std::string> path_of_;
  std::map<std::string, IgnoredKey> ignored_;
  bool handled_ = false;
};

std::optional<Error> read_tree(const json& node, const std::string& prefix, RecipeReader& reader) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object() && it.key() != "_target_") {
      if (auto e = read_tree(it.value(), path, reader)) return e;
    } else if (it.key() != "_target_") {
      if (auto e = reader.leaf(path, it.value())) return e;
    }
  }
  return std::nullopt;
}

// "model.tensor_model_parallel_size=4", "++train.micro_batch_size=2": the path and its value
// (YAML scalars: 4, true, "x").
std::optional<std::pair<std::string, json>> override_of(const std::string& word) {
  std::string w = word;
  while (!w.empty() && w.front() == '+') w.erase(0, 1);
  const size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0 || w.rfind("--", 0) == 0) return std::nullopt;
  const std::string path = w.substr(0, eq);
  const size_t dot = path.find('.');
  if (dot == std::string::npos || !is_section(path.substr(0, dot))) return std::nullopt;
  Result<json> value = parse_yaml(w.substr(eq + 1), path);
  return std::pair{path, value && !value->is_object() ? *value : json(w.substr(eq + 1))};
}

}  // namespace

bool looks_like_megatron_recipe(const json& doc) {
  if (!doc.is_object() || !doc.contains("model") || !doc["model"].is_object()) return false;
  const json& m = doc["model"];
  const bool megatron_fields = m.contains("tensor_model_parallel_size") ||
                               m.contains("num_layers") || m.contains("hidden_size");
  return megatron_fields &&
         (doc.contains("train") || doc.contains("trainer") || doc.contains("optimizer") ||
          doc.contains("ddp") || m.contains("micro_batch_size"));
}

bool looks_like_recipe_overrides(std::string_view text) {
  const ShellScript script = parse_shell(text);
  int overrides = 0;
  for (const ShellCommand& c : script.commands)
    for (const std::string& w : c.words) overrides += override_of(w).has_value();
  return overrides >= 2;
}

Result<Imported> import_megatron_recipe(const json& doc, std::string_view overrides_text) {
  RecipeReader reader(doc.is_object() ? "megatron-recipe" : "megatron-overrides");
  if (doc.is_object())
    if (auto e = read_tree(doc, "", reader)) return *e;
  if (!overrides_text.empty()) {
    const ShellScript script = parse_shell(overrides_text);
    for (const ShellCommand& c : script.commands)
      for (const std::string& w : c.words) {
        std::optional<std::pair<std::string, json>> o = override_of(w);
        if (!o) {
          reader.note_ignored(w,
                              "not a recipe override (section.key=value); a recipe file or "
                              "--recipe name is not read: paste the recipe's YAML");
          continue;
        }
        if (auto e = reader.leaf(o->first, o->second)) return *e;
      }
  }
  const int64_t world = reader.devices > 0 ? reader.devices * reader.nodes : 0;
  if (auto e = reader.finish_into(world, reader.devices_from)) return *e;
  return reader.imported();
}

}  // namespace vramplan::interop
