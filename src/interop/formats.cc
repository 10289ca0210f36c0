#include "interop/formats.h"

#include "interop/megatron/megatron_import.h"
#include "interop/structured_text.h"
#include "interop/torchtitan/torchtitan_import.h"

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
  return import_torchtitan_command(d.text);
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
    {{"torchtitan", ImportKind::kTraining,
      "torchtitan job config TOML (train_configs/*.toml), a # torchrun comment giving the world"},
     torchtitan_toml,
     read_torchtitan_toml},
    {{"torchtitan-command", ImportKind::kTraining,
      "torchtitan launch command with the job as overrides (torchrun ... -m torchtitan.train "
      "--model.flavor 8B ...)"},
     torchtitan_command,
     read_torchtitan_command},
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
