// A Megatron-LM GPT model described by its own arguments: a config object with model_type
// "megatron_gpt" whose keys are Megatron's argument names without the dashes (num_layers,
// hidden_size, ffn_hidden_size, num_query_groups, swiglu, normalization, num_experts, ...), read
// with Megatron's defaults (megatron/training/arguments.py) for what it leaves unset. The
// Megatron importer writes such objects; users may too.
#pragma once

#include <string_view>

#include "model/config_fields.h"
#include "vramplan/model/model.h"

namespace vramplan::hf {

inline constexpr std::string_view kMegatronModelType = "megatron_gpt";

// Every size and feature, then the per-layer vectors; errors are latched in `f`.
void read_megatron_sizes(Fields& f, ModelConfig& m);
void read_megatron_layers(Fields& f, ModelConfig& m);

// Megatron's --moe-layer-freq: "([0]*3+[1]*12)" lists dense (0) and MoE (1) layers; an integer k
// makes every k-th layer MoE; empty means every layer. Errors name `field`.
Result<std::vector<bool>> moe_layer_pattern(std::string_view text, int64_t layers,
                                            const std::string& field);

}  // namespace vramplan::hf
