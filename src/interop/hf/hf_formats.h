// The Hugging Face stack's import formats as formats.cc lists them: how each is recognised by
// content and read (a config file alone, a flag list, or a launch script with the config files
// it writes in here-documents).
#pragma once

#include "interop/formats.h"

namespace vramplan::interop::hf {

// Whether the text may be a shell command or script: no JSON or TOML, and no YAML mapping but one
// a command line makes by accident ("... --fsdp_config '{"a": true}'" is a mapping whose key has
// spaces; a config's keys have none).
bool is_shell(const Document& doc);

// "deepspeed": a DeepSpeed config JSON, or a `deepspeed` launch (or a Trainer launch with
// --deepspeed) with its TrainingArguments.
bool recognises_deepspeed(const Document& doc);
Result<Imported> read_deepspeed(const Document& doc);

// "accelerate": an accelerate config YAML, or an `accelerate launch` script.
bool recognises_accelerate(const Document& doc);
Result<Imported> read_accelerate(const Document& doc);

// "hf-trainer": TrainingArguments as JSON, YAML or a --flag list, or a torchrun / python launch
// of a Trainer script.
bool recognises_hf_trainer(const Document& doc);
Result<Imported> read_hf_trainer(const Document& doc);

}  // namespace vramplan::interop::hf
