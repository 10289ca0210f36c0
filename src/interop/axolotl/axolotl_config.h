// An axolotl config YAML (examples/llama-3/lora-8b.yml ...) as a run's settings: base_model,
// adapter lora / qlora with load_in_4bit / load_in_8bit, lora_r and targets, sequence_len and
// packing, micro_batch_size and accumulation, gradient checkpointing, the optimizer, bf16 / fp16
// (axolotl loads the weights in that dtype), attention, and DeepSpeed or FSDP. axolotl trains
// with the HF Trainer: vramplan's hf-trainer conventions (deepspeed under DeepSpeed).
#pragma once

#include <nlohmann/json.hpp>

#include "interop/formats.h"

namespace vramplan::interop::axolotl {

bool looks_like_axolotl_config(const nlohmann::json& doc);

bool recognises_axolotl(const Document& doc);
Result<Imported> read_axolotl(const Document& doc);

}  // namespace vramplan::interop::axolotl
