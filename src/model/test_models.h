// Small hand-built architectures shared by unit tests, so a test does not depend on parsing;
// and, for the config readers' own tests, a config parsed with its failure reported.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "vramplan/model/hf_config.h"
#include "vramplan/model/model.h"
#include "vramplan/model/presets.h"

namespace vramplan::testing {

// A catalog preset's model as the CLI reads it, cut to its first `layers` decoder layers when
// `layers` > 0 (the per-layer lists follow; MoE layers stay MoE).
inline ModelConfig preset_model(std::string_view name, int64_t layers = 0) {
  const Preset* preset = find_preset(name);
  EXPECT_NE(preset, nullptr) << name;
  if (preset == nullptr) return {};
  Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
  EXPECT_TRUE(parsed.ok()) << name;
  if (!parsed.ok()) return {};
  ModelConfig m = parsed->model;
  if (layers > 0) {
    m.num_layers = layers;
    m.moe_layers.resize(static_cast<size_t>(layers), m.is_moe());
    m.layer_attention.resize(static_cast<size_t>(layers), LayerAttention::kFull);
  }
  return m;
}

// Llama-3.1-8B's shape: h 4096, 32 layers, 32 heads, 8 KV heads, d 128, f 14336, V 128256.
inline ModelConfig llama8b_shape() {
  ModelConfig m;
  m.name = "llama8b-shape";
  m.model_type = "llama";
  m.hidden = 4096;
  m.num_layers = 32;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.ffn = 14336;
  m.vocab = 128256;
  m.max_position_embeddings = 131072;
  m.moe_layers.assign(32, false);
  m.layer_attention.assign(32, LayerAttention::kFull);
  return m;
}

// A tiny MoE: h 64, 4 layers (first dense), 4 heads, 2 KV heads, 8 experts top-2, f_e 32.
inline ModelConfig tiny_moe() {
  ModelConfig m;
  m.name = "tiny-moe";
  m.model_type = "qwen3_moe";
  m.hidden = 64;
  m.num_layers = 4;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 16;
  m.ffn = 128;
  m.vocab = 1000;
  m.max_position_embeddings = 4096;
  m.moe.num_experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn = 32;
  m.moe_layers = {false, true, true, true};
  m.layer_attention.assign(4, LayerAttention::kFull);
  return m;
}

// A config.json text parsed; a failure fails the test and gives an empty model.
inline ModelConfig parse_ok(std::string_view json) {
  Result<ParsedModel> parsed = parse_hf_config(json, "test");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message());
  return parsed.ok() ? parsed->model : ModelConfig{};
}

// A config.json text that must be refused: its error (a success fails the test).
inline Error parse_error(std::string_view json) {
  Result<ParsedModel> parsed = parse_hf_config(json, "test");
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? Error{} : parsed.error();
}

}  // namespace vramplan::testing
