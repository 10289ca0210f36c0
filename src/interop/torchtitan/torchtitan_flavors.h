// torchtitan's model flavors (torchtitan/models/<name>/__init__.py, the `*_args` tables) and the
// vramplan model each one is: a preset where the flavor is that preset's architecture exactly,
// else a config built from the flavor's own arguments the way torchtitan's model code builds it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::interop {

// The model code a flavor runs (torchtitan/models/<name>/model/model.py).
enum class TitanArch { kLlama3, kLlama4, kDeepseekV3, kQwen3 };

// A flavor's arguments under torchtitan's own names (0 = the model args' default or "none").
struct TitanFlavor {
  const char* model;   // model.name: "llama3"
  const char* flavor;  // model.flavor: "8B"
  const char* preset;  // the vramplan preset it is exactly, or nullptr
  TitanArch arch;
  int64_t dim = 0;
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;  // 0: n_heads
  int64_t vocab_size = 0;
  // Llama 3 / 4 FeedForward: hidden = multiple_of-rounded ffn_dim_multiplier · int(2·4·dim/3).
  int64_t multiple_of = 0;
  double ffn_dim_multiplier = 0;
  // Qwen3 / DeepSeek: the dense FFN width (hidden_dim, inter_dim) and the head width.
  int64_t hidden_dim = 0;
  int64_t head_dim = 0;
  bool weight_tying = false;  // Qwen3 enable_weight_tying
  // MoE (MoEArgs): routed experts, shared experts, top-k, expert width (DeepSeek/Qwen3
  // moe_inter_dim; Llama 4 derives it), leading dense layers (DeepSeek n_dense_layers), and
  // Llama 4's interleave_moe_layer_step.
  int64_t num_experts = 0;
  int64_t num_shared_experts = 0;
  int64_t top_k = 0;
  int64_t moe_inter_dim = 0;
  int64_t n_dense_layers = 0;
  int64_t interleave_moe_layer_step = 0;
  // DeepSeek's multi-head latent attention.
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// The flavor `model`/`flavor` names, or nullptr.
const TitanFlavor* find_titan_flavor(std::string_view model, std::string_view flavor);

// torchtitan's model names, and one model's flavors, as an error lists them.
std::string titan_model_names();
std::string titan_flavor_names(std::string_view model);

// The flavor as a vramplan model_config object (a Hugging Face config.json, or a megatron_gpt
// one for Llama 4, whose family vramplan reads no config.json of); `seq_len` becomes its
// max_position_embeddings, as torchtitan sets max_seq_len from training.seq_len.
nlohmann::json titan_model_config(const TitanFlavor& f, int64_t seq_len);

// Which decoder layers are MoE layers (empty for a dense model).
std::vector<bool> titan_moe_layers(const TitanFlavor& f);

// The flavor the vramplan model `preset` is (the first in table order), or nullptr.
const TitanFlavor* titan_flavor_of_preset(std::string_view preset);

// Every flavor, in table order.
const std::vector<TitanFlavor>& titan_flavors();

}  // namespace vramplan::interop
