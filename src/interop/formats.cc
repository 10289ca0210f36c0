#include "interop/formats.h"

#include "interop/axolotl/axolotl_config.h"
#include "interop/hf/hf_formats.h"
#include "interop/megatron/megatron_import.h"
#include "interop/megatron/megatron_recipe.h"
#include "interop/serving/serving_import.h"
#include "interop/structured_text.h"
#include "interop/torchtitan/torchtitan_import.h"
#include "interop/torchtune/torchtune_format.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

bool megatron_yaml(const Document& d) { return d.yaml && looks_like_megatron_test_yaml(*d.yaml); }
Result<Imported> read_megatron_yaml(const Document& d) {
  // With --from-format given, detection did not run: an empty or other document reaches here.
  if (!megatron_yaml(d))
    return Error{"from", std::string(d.text.substr(0, 60)),
                 "a Megatron-LM functional test model_config.yaml (MODEL_ARGS mapping)",
                 "no MODEL_ARGS mapping"};
  return import_megatron_test_yaml(*d.yaml);
}

const nlohmann::json* structured(const Document& d) {
  if (d.json) return &*d.json;
  if (d.yaml) return &*d.yaml;
  return nullptr;
}
bool megatron_recipe(const Document& d) {
  const nlohmann::json* doc = structured(d);
  return doc != nullptr && looks_like_megatron_recipe(*doc);
}
Result<Imported> read_megatron_recipe(const Document& d) {
  const nlohmann::json* doc = structured(d);
  if (doc == nullptr || !doc->is_object())
    return Error{"from", std::string(d.text.substr(0, 60)),
                 "a Megatron-Bridge / NeMo recipe YAML (model, train, optimizer sections)",
                 "not a YAML mapping"};
  return import_megatron_recipe(*doc, "");
}
bool megatron_overrides(const Document& d) {
  return !d.json && !(d.yaml && d.yaml->is_object()) && looks_like_recipe_overrides(d.text);
}
Result<Imported> read_megatron_overrides(const Document& d) {
  return import_megatron_recipe(nullptr, d.text);
}

// Structured documents are never shell commands.
bool megatron_command(const Document& d) {
  return !d.json && !d.toml && !(d.yaml && d.yaml->is_object()) &&
         looks_like_megatron_command(d.text);
}
Result<Imported> read_megatron_command(const Document& d) {
  return import_megatron_command(d.text);
}

bool torchtitan_toml(const Document& d) { return d.toml && looks_like_torchtitan_toml(*d.toml); }
Result<Imported> read_torchtitan_toml(const Document& d) {
  if (!d.toml)
    return Error{"from", std::string(d.text.substr(0, 60)), "a torchtitan job config TOML",
                 "not a TOML document"};
  return import_torchtitan_toml(d.text, *d.toml);
}

bool torchtitan_command(const Document& d) {
  return !d.json && !d.toml && !(d.yaml && d.yaml->is_object()) &&
         looks_like_torchtitan_command(d.text);
}
Result<Imported> read_torchtitan_command(const Document& d) {
  return import_torchtitan_command(d.text, d.files);
}
// A vLLM or SGLang launch: a command, script or `docker run`, with or without its log below.
bool vllm_command(const Document& d) {
  return !d.json && !d.toml && !(d.yaml && d.yaml->is_object()) && looks_like_vllm_command(d.text);
}
Result<Imported> read_vllm_command(const Document& d) { return import_vllm_command(d.text); }
bool sglang_command(const Document& d) {
  return !d.json && !d.toml && !(d.yaml && d.yaml->is_object()) &&
         looks_like_sglang_command(d.text);
}
Result<Imported> read_sglang_command(const Document& d) { return import_sglang_command(d.text); }

const FormatHandler kHandlers[] = {
    {{"megatron-yaml", ImportKind::kTraining,
      "Megatron-LM functional test model_config.yaml (MODEL_ARGS)"},
     megatron_yaml,
     read_megatron_yaml},
    {{"megatron-recipe", ImportKind::kTraining,
      "Megatron-Bridge ConfigContainer or NeMo megatron_gpt_config YAML (model, train, "
      "optimizer, ddp, trainer sections)"},
     megatron_recipe,
     read_megatron_recipe},
    {{"torchtitan", ImportKind::kTraining,
      "torchtitan job config TOML (train_configs/*.toml), a # torchrun comment giving the world"},
     torchtitan_toml,
     read_torchtitan_toml},
    {{"torchtitan-command", ImportKind::kTraining,
      "torchtitan launch command with the job as overrides (torchrun ... -m torchtitan.train "
      "--model.flavor 8B ...)"},
     torchtitan_command,
     read_torchtitan_command},
    {{"megatron-overrides", ImportKind::kTraining,
      "Megatron-Bridge / NeMo key=value overrides (model.tensor_model_parallel_size=4 ...)"},
     megatron_overrides,
     read_megatron_overrides},
    {{"megatron", ImportKind::kTraining,
      "Megatron-LM launch command or script (torchrun ... pretrain_gpt.py ...), or its "
      "argument list"},
     megatron_command,
     read_megatron_command},
    {{"vllm", ImportKind::kServing,
      "vLLM launch command or script (vllm serve MODEL ..., python -m "
      "vllm.entrypoints.openai.api_server ..., docker run vllm/vllm-openai ...)"},
     vllm_command,
     read_vllm_command},
    {{"sglang", ImportKind::kServing,
      "SGLang launch command or script (python -m sglang.launch_server --model-path ...)"},
     sglang_command,
     read_sglang_command},
    {{"torchtune", ImportKind::kTraining,
      "torchtune recipe config YAML (model._component_ ...), or a tune run script"},
     torchtune::recognises_torchtune,
     torchtune::read_torchtune},
    {{"axolotl", ImportKind::kTraining,
      "axolotl config YAML (base_model, adapter, micro_batch_size ...)"},
     axolotl::recognises_axolotl,
     axolotl::read_axolotl},
    {{"accelerate", ImportKind::kTraining,
      "accelerate config YAML (distributed_type, fsdp_config, mixed_precision), or an "
      "accelerate launch script"},
     hf::recognises_accelerate,
     hf::read_accelerate},
    {{"deepspeed", ImportKind::kTraining,
      "DeepSpeed config JSON (zero_optimization ...), or a deepspeed launch script with its HF "
      "TrainingArguments"},
     hf::recognises_deepspeed,
     hf::read_deepspeed},
    {{"hf-trainer", ImportKind::kTraining,
      "Hugging Face TrainingArguments (JSON, YAML or a --flag list), or a torchrun / python "
      "launch of a Trainer script"},
     hf::recognises_hf_trainer,
     hf::read_hf_trainer},
};

}  // namespace

Document read_document(std::string_view text) {
  Document d;
  d.text = text;
  json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object()) {
    d.json = std::move(parsed);
    return d;
  }
  if (Result<json> toml = parse_toml(text, "from"); toml && toml->is_object() && !toml->empty())
    d.toml = std::move(toml).value();
  if (Result<json> yaml = parse_yaml(text, "from"); yaml && yaml->is_object())
    d.yaml = std::move(yaml).value();
  return d;
}

std::span<const FormatHandler> format_handlers() { return kHandlers; }

}  // namespace vramplan::interop
