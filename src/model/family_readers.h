// The readers of config.json, one concern each: sizes, family features, MoE, attention layout.
// Each writes into the ModelConfig and latches its first error in the Fields.
#pragma once

#include <vector>

#include "model/config_fields.h"
#include "model/families.h"
#include "vramplan/model/model.h"

namespace vramplan::hf {

void read_standard_sizes(Fields& f, ModelConfig& m);

void read_gpt2(Fields& f, ModelConfig& m);

void read_family_features(Fields& f, Family family, ModelConfig& m);

// MoE layer placement, per family.
std::vector<bool> moe_layer_flags(Fields& f, Family family, const ModelConfig& m);

void read_moe(Fields& f, Family family, ModelConfig& m);

void read_attention_layout(Fields& f, Family family, ModelConfig& m);

}  // namespace vramplan::hf
