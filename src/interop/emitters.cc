#include "interop/emitters.h"

#include <fmt/format.h>

#include "interop/hf_emit/hf_emitters.h"
#include "interop/megatron/megatron_emit.h"
#include "interop/serving/serving_emit.h"
#include "interop/torchtitan/torchtitan_emit.h"
#include "interop/torchtune/torchtune_emit.h"
#include "vramplan/model/presets.h"

namespace vramplan {
namespace interop {
namespace {

const EmitHandler kHandlers[] = {
    {{"megatron", ImportKind::kTraining,
      "a Megatron-LM launch script (torchrun ... pretrain_gpt.py with the run's arguments)"},
     emit_megatron,
     nullptr},
    {{"torchtitan", ImportKind::kTraining,
      "a torchtitan job config TOML (torchrun ... -m torchtitan.train --job.config_file)"},
     emit_torchtitan,
     nullptr},
    {{"vllm", ImportKind::kServing,
      "a vLLM launch command (vllm serve MODEL with the run's layout and memory flags)"},
     nullptr,
     emit_vllm},
    {{"sglang", ImportKind::kServing,
      "an SGLang launch command (python3 -m sglang.launch_server with the run's flags)"},
     nullptr,
     emit_sglang},
    {{"deepspeed", ImportKind::kTraining,
      "a DeepSpeed run of the HF Trainer (a script writing ds_config.json, then deepspeed "
      "--num_gpus N train.py with the Trainer's arguments)"},
     hf_emit::emit_deepspeed,
     nullptr},
    {{"accelerate", ImportKind::kTraining,
      "an accelerate run of the HF Trainer (a script writing the accelerate config, then "
      "accelerate launch train.py with the Trainer's arguments)"},
     hf_emit::emit_accelerate,
     nullptr},
    {{"torchtune", ImportKind::kTraining,
      "a torchtune recipe config (its tune run line in the header comment)"},
     torchtune::emit_torchtune,
     nullptr},
};

// The formats of one kind ("none yet" while a kind has no writer).
std::string format_names(ImportKind kind) {
  std::string names;
  for (const EmitHandler& h : kHandlers)
    if (h.format.kind == kind) names += (names.empty() ? "" : ", ") + std::string(h.format.name);
  return names.empty() ? "none yet" : names;
}

const EmitHandler* find(std::string_view name) {
  for (const EmitHandler& h : kHandlers)
    if (name == h.format.name) return &h;
  return nullptr;
}

}  // namespace

std::span<const EmitHandler> emit_handlers() { return kHandlers; }

Error cannot_emit(const std::string& format, const std::string& what, const std::string& instead) {
  return Error{"emit", format, instead, what};
}

std::string preset_hub_id(const nlohmann::json& settings) {
  if (!settings.contains("model") || !settings["model"].is_string()) return "";
  const Preset* preset = find_preset(settings["model"].get<std::string>());
  return preset == nullptr ? "" : preset->hub_id;
}

}  // namespace interop

std::span<const EmitFormat> emit_formats() {
  static const std::vector<EmitFormat> formats = [] {
    std::vector<EmitFormat> out;
    for (const interop::EmitHandler& h : interop::emit_handlers()) out.push_back(h.format);
    return out;
  }();
  return formats;
}

Result<std::string> emit_training(const Scenario& scenario, const nlohmann::json& settings,
                                  std::string_view format) {
  const interop::EmitHandler* h = interop::find(format);
  const std::string accepted = "a training format: " + interop::format_names(ImportKind::kTraining);
  if (h == nullptr) return Error{"emit", std::string(format), accepted, ""};
  if (h->training == nullptr)
    return Error{"emit", std::string(format), accepted, "it writes a serving command"};
  return h->training(scenario, settings);
}

Result<std::string> emit_serving(const InferenceScenario& scenario, const nlohmann::json& settings,
                                 std::string_view format) {
  const interop::EmitHandler* h = interop::find(format);
  const std::string accepted = "a serving format: " + interop::format_names(ImportKind::kServing);
  if (h == nullptr) return Error{"emit", std::string(format), accepted, ""};
  if (h->serving == nullptr)
    return Error{"emit", std::string(format), accepted, "it writes a training config"};
  return h->serving(scenario, settings);
}

}  // namespace vramplan
