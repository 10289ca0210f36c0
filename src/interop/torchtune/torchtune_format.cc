#include "interop/torchtune/torchtune_format.h"

#include "interop/hf/hf_formats.h"
#include "interop/hf/hf_script.h"
#include "interop/structured_text.h"
#include "interop/torchtune/torchtune_recipe.h"

namespace vramplan::interop::torchtune {
namespace {

using nlohmann::json;

RecipeLaunch launch_of(const hf::HfLaunch& launch) {
  RecipeLaunch out;
  out.recipe = launch.command.program.front();
  out.world = launch.command.world_size;
  out.world_from = launch.command.world_size_from;
  return out;
}

// The first `tune run` line of the config's comments ("#   tune run --nproc_per_node 4
// full_finetune_distributed --config llama3_1/8B_full"), as torchtune's configs document their
// launch.
RecipeLaunch header_launch(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    const size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string_view::npos || line[hash] != '#') continue;
    const std::string_view comment = line.substr(hash + 1);
    if (comment.find("tune run") == std::string_view::npos) continue;
    std::optional<hf::HfLaunch> launch = hf::find_hf_launch(comment);
    if (!launch || launch->launcher != hf::Launcher::kTune) continue;
    RecipeLaunch out = launch_of(*launch);
    if (out.world > 0) out.world_from = "(the config's comment: tune run " + out.world_from + ")";
    return out;
  }
  return {};
}

// torchtune's key=value overrides after --config, over the recipe's keys.
void apply_overrides(const std::vector<std::string>& words, json& doc, hf::DocKeys& keys) {
  for (const std::string& w : words) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0 || w[0] == '-') continue;
    const std::string path = w.substr(0, eq);
    json* node = &doc;
    size_t start = 0;
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
      json& child = (*node)[path.substr(start, dot - start)];
      if (!child.is_object()) child = json::object();
      node = &child;
      start = dot + 1;
    }
    Result<json> parsed = parse_yaml(w.substr(eq + 1), "from");
    (*node)[path.substr(start)] = parsed ? *parsed : json(w.substr(eq + 1));
    keys.show_as(path, w.substr(0, eq + 1));
  }
}

Result<Imported> read_script(const hf::HfLaunch& launch) {
  ImportBuilder out("torchtune");
  const std::vector<std::string>& program = launch.command.program;
  out.understood(program.front(), "", "the torchtune recipe it runs");
  std::string config_path;
  std::vector<std::string> overrides;
  for (size_t i = 1; i < program.size(); ++i) {
    if (program[i] == "--config" && i + 1 < program.size())
      config_path = program[++i];
    else
      overrides.push_back(program[i]);
  }
  const std::string* text = config_path.empty() ? nullptr : hf::written_file(launch, config_path);
  if (text == nullptr && !config_path.empty() && !config_path.ends_with(".yaml"))
    text = hf::written_file(launch, config_path + ".yaml");
  Result<json> doc = text ? parse_yaml(*text, "from") : Result<json>(json());
  if (!doc || !doc->is_object())
    return Error{"--config", config_path,
                 "a recipe config the script writes (a here-document) or one given with it (the "
                 "CLI reads it beside the --from file; the API takes it in from_files); "
                 "torchtune's built-in configs are not part of vramplan: paste the YAML",
                 "the config is not in the text"};
  json recipe = *doc;
  hf::DocKeys keys(recipe);
  apply_overrides(overrides, recipe, keys);
  for (const std::string& w : overrides)
    if (w.find('=') == std::string::npos) out.ignore(w, "", "not a key=value override");
  if (auto e = read_torchtune_recipe(keys, launch_of(launch), out)) return *e;
  return out.finish();
}

std::optional<hf::HfLaunch> tune_launch(const Document& d) {
  if (!hf::is_shell(d)) return std::nullopt;
  std::optional<hf::HfLaunch> launch = hf::find_hf_launch(d.text);
  if (!launch || launch->launcher != hf::Launcher::kTune) return std::nullopt;
  launch->named = d.files;
  return launch;
}

}  // namespace

bool recognises_torchtune(const Document& d) {
  if (d.yaml && looks_like_torchtune_recipe(*d.yaml)) return true;
  return tune_launch(d).has_value();
}

Result<Imported> read_torchtune(const Document& d) {
  if (std::optional<hf::HfLaunch> launch = tune_launch(d)) return read_script(*launch);
  if (!d.yaml || !d.yaml->is_object())
    return Error{"from", std::string(d.text.substr(0, 60)),
                 "a torchtune recipe YAML or a tune run script", "neither"};
  ImportBuilder out("torchtune");
  hf::DocKeys keys(*d.yaml);
  if (auto e = read_torchtune_recipe(keys, header_launch(d.text), out)) return *e;
  return out.finish();
}

}  // namespace vramplan::interop::torchtune
