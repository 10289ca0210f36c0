// The fine-tuning part of the settings (scenario_io.h reads the rest).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// Reads finetune, lora_rank, lora_targets, adapter_dtype, freeze_embeddings and
// freeze_first_layers from the settings (scenario_io.h); QLoRA defaults the optimizer to 8-bit
// AdamW unless the settings name one. LoRA settings without a LoRA method are an error.
std::optional<Error> read_finetune_settings(const nlohmann::json& settings, Scenario& scenario);

}  // namespace vramplan
