// Readers for the hybrid families, whose layers differ in what mixes tokens: Qwen3-Next (gated
// DeltaNet and gated attention), Nemotron-H (Mamba-2, attention, MLP and MoE blocks) and
// Granite-4.0-H (Mamba-2 or attention, each followed by MoE and a shared MLP).
#pragma once

#include "model/config_fields.h"
#include "model/families.h"
#include "vramplan/model/model.h"

namespace vramplan::hf {

bool is_hybrid_family(Family family);

// Sizes and features that the standard readers do not know: the Mamba-2 or DeltaNet mixer,
// the shared experts and their gate.
void read_hybrid_features(Fields& f, Family family, ModelConfig& m);

// layer_mixer, layer_has_mlp, moe_layers and layer_attention, one entry per layer.
void read_hybrid_layers(Fields& f, Family family, ModelConfig& m);

}  // namespace vramplan::hf
