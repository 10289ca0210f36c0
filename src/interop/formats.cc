#include "interop/formats.h"

#include "interop/axolotl/axolotl_config.h"
#include "interop/hf/hf_formats.h"
#include "interop/megatron/megatron_import.h"
#include "interop/structured_text.h"
#include "interop/torchtune/torchtune_format.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

bool megatron_yaml(const Document& d) { return d.yaml && looks_like_megatron_test_yaml(*d.yaml); }
Result<Imported> read_megatron_yaml(const Document& d) {
  return import_megatron_test_yaml(*d.yaml);
}

// Structured documents are never shell commands.
bool megatron_command(const Document& d) {
  return !d.json && !d.toml && !(d.yaml && d.yaml->is_object()) &&
         looks_like_megatron_command(d.text);
}
Result<Imported> read_megatron_command(const Document& d) {
  return import_megatron_command(d.text);
}

const FormatHandler kHandlers[] = {
    {{"megatron-yaml", ImportKind::kTraining,
      "Megatron-LM functional test model_config.yaml (MODEL_ARGS)"},
     megatron_yaml,
     read_megatron_yaml},
    {{"megatron", ImportKind::kTraining,
      "Megatron-LM launch command or script (torchrun ... pretrain_gpt.py ...), or its "
      "argument list"},
     megatron_command,
     read_megatron_command},
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
