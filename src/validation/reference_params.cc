// The reference's parameter counts (pytorch_reference.json "parameter_counts": every preset's
// transformers class instantiated on the meta device) against vramplan's count_parameters, part
// by part: total, embedding, LM head, the rest outside the layers (final norm, learned
// positions), each run of identical layers, and the modules of a layer.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "validation/dataset_rows.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/model/params.h"

namespace vramplan::dataset_rows {
namespace {

int64_t count_of(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

// transformers' module names in a decoder layer, as vramplan's LayerParams splits them: the
// attention module (q/k norms, sinks, MLA latents and DeepSeek-V3.2's indexer inside it), the
// MLP module (router, routed and shared experts inside it; Jamba's and Falcon-H1's
// `feed_forward`; granite-4.0-h's `block_sparse_moe` beside its `shared_mlp`), a Mamba-2 or
// gated-DeltaNet mixer (`mamba`, `linear_attn`), Nemotron-H's `mixer` (whichever block the
// layer holds) and the layer's own norms.
int64_t vramplan_module(const LayerParams& layer, const std::string& module) {
  const int64_t attention = layer.attention + layer.attention_replicated + layer.indexer;
  const int64_t ssm = layer.ssm + layer.ssm_small;
  const int64_t moe = layer.router + layer.routed_experts;
  if (module == "self_attn" || module == "attn") return attention;
  if (module == "mlp" || module == "feed_forward") return layer.mlp + moe;
  if (module == "block_sparse_moe") return moe;
  if (module == "shared_mlp") return layer.mlp;
  if (module == "mamba" || module == "linear_attn") return ssm;
  if (module == "mixer") return attention + ssm + layer.mlp + moe;
  return -1;  // a norm: compared as the sum of the layer's norms
}

bool is_norm_module(const std::string& module) {
  return module.find("norm") != std::string::npos || module.rfind("ln_", 0) == 0;
}

void check_modules(const std::string& preset, const std::string& layer_name,
                   const nlohmann::json& modules, const LayerParams& layer,
                   std::vector<ParameterCountCheck>& out) {
  int64_t norms = 0;
  bool any_norm = false;
  for (const auto& [module, count] : modules.items()) {
    if (is_norm_module(module)) {
      norms += count.get<int64_t>();
      any_norm = true;
      continue;
    }
    out.push_back(
        {preset, layer_name + " " + module, count.get<int64_t>(), vramplan_module(layer, module)});
  }
  if (any_norm) out.push_back({preset, layer_name + " norms", norms, layer.norms});
}

void check_preset(const nlohmann::json& p, std::vector<ParameterCountCheck>& out) {
  const std::string preset = p.value("preset", std::string());
  Result<ParsedModel> parsed =
      resolve_model({{"model", preset}}, [](const std::string& path) -> Result<std::string> {
        return Error{"model", path, "a preset", "validation reads no files"};
      });
  if (!parsed) {  // a preset vramplan does not have: every part differs
    out.push_back({preset, "total (no such vramplan preset)", count_of(p, "total"), 0});
    return;
  }
  const ModelConfig& m = parsed->model;
  const ParamCounts counts = count_parameters(m);
  // The reference counts model.parameters() of the text model (a multimodal preset's
  // text_config); vramplan's total is the Hub's, buffers and any vision tower included.
  out.push_back(
      {preset, "total", count_of(p, "total"), counts.total - counts.buffers - counts.vision});
  out.push_back({preset, "embedding", count_of(p, "embedding"), counts.embedding});
  out.push_back({preset, "lm head", count_of(p, "lm_head"), counts.lm_head});
  out.push_back({preset, "other (final norm, positions)", count_of(p, "other"),
                 counts.final_norm + counts.position_embedding});
  out.push_back(
      {preset, "layers", count_of(p, "num_layers"), static_cast<int64_t>(counts.layers.size())});
  // per_layer: runs of consecutive layers with the same count, each compared as one part when
  // vramplan's layers of the run agree with each other, else layer by layer.
  size_t first = 0;
  for (const nlohmann::json& run : p.value("per_layer", nlohmann::json::array())) {
    const int64_t params = count_of(run, "params");
    const size_t end = first + static_cast<size_t>(count_of(run, "layers"));
    auto ours = [&](size_t i) {
      return i < counts.layers.size() ? counts.layers[i].parameters() : 0;
    };
    bool uniform = true;
    for (size_t i = first; i < end; ++i) uniform = uniform && ours(i) == ours(first);
    if (uniform) {
      const std::string name = end - first == 1 ? fmt::format("layer {}", first)
                                                : fmt::format("layers {}-{}", first, end - 1);
      out.push_back({preset, name, params, ours(first)});
    } else {
      for (size_t i = first; i < end; ++i)
        out.push_back({preset, fmt::format("layer {}", i), params, ours(i)});
    }
    first = end;
  }
  if (counts.layers.empty()) return;
  // layer_modules describes the model's last layer (the common kind); first_layer_modules,
  // when present, its first (DeepSeek's dense layers).
  check_modules(preset, "layer " + std::to_string(counts.layers.size() - 1),
                p.value("layer_modules", nlohmann::json::object()), counts.layers.back(), out);
  if (p.contains("first_layer_modules"))
    check_modules(preset, "layer 0", p["first_layer_modules"], counts.layers.front(), out);
}

}  // namespace

void add_reference_parameter_counts(const nlohmann::json& data, ValidationReport& report) {
  for (const nlohmann::json& p : data.value("parameter_counts", nlohmann::json::array()))
    check_preset(p, report.parameter_counts);
}

}  // namespace vramplan::dataset_rows
