// Readers for the families added with issue 22 that the standard readers do not cover:
// Hunyuan-MoE (per-layer expert lists), Apertus (xIELU MLP), Jamba (Mamba-1 / attention with
// periodic MoE), Falcon-H1 (parallel attention + Mamba-2), Llama 4 (interleaved MoE with a
// shared expert, chunked attention) and Llama-3.2-Vision (cross-attention layers).
#pragma once

#include "model/config_fields.h"
#include "model/families.h"
#include "vramplan/model/model.h"

namespace vramplan::hf {

bool is_recent_family(Family family);

// Features read after the standard sizes: MLP kind, MoE and mixer settings.
void read_recent_features(Fields& f, Family family, ModelConfig& m);

// layer_mixer, moe_layers and layer_attention, one entry per layer.
void read_recent_layers(Fields& f, Family family, ModelConfig& m);

}  // namespace vramplan::hf
