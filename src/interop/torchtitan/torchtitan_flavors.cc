// The flavor tables as torchtitan publishes them (pytorch/torchtitan at 238fa99, the last commit
// with TOML job configs: torchtitan/models/{llama3,llama4,deepseek_v3,qwen3}/__init__.py), with
// the defaults of each model's args dataclass (model/args.py, models/moe/moe.py MoEArgs) written
// out. A flavor is a preset only where it is that model exactly: Llama 3's 8B/70B/405B are
// Llama 3.1's, DeepSeek's 16B is DeepSeek-V2-Lite, Qwen3's are Qwen3's. DeepSeek's 671B is not
// the DeepSeek-V3 preset: torchtitan's model has no multi-token-prediction layer and keeps its
// routing bias as a buffer, not a parameter.
#include "interop/torchtitan/torchtitan_flavors.h"

#include <algorithm>

namespace vramplan::interop {
namespace {

using nlohmann::json;
using A = TitanArch;

// clang-format off
const std::vector<TitanFlavor> kFlavors = {
    // llama3/__init__.py llama3_args (TransformerModelArgs: vocab_size 128256, multiple_of 256).
    {.model = "llama3", .flavor = "debugmodel", .preset = nullptr, .arch = A::kLlama3, .dim = 256,
     .n_layers = 6, .n_heads = 16, .vocab_size = 2048, .multiple_of = 256},
    {.model = "llama3", .flavor = "debugmodel_flex_attn", .preset = nullptr, .arch = A::kLlama3,
     .dim = 256, .n_layers = 6, .n_heads = 16, .vocab_size = 2048, .multiple_of = 256},
    {.model = "llama3", .flavor = "debugmodel_varlen_attn", .preset = nullptr, .arch = A::kLlama3,
     .dim = 256, .n_layers = 6, .n_heads = 16, .vocab_size = 2048, .multiple_of = 256},
    {.model = "llama3", .flavor = "8B", .preset = "Llama-3.1-8B", .arch = A::kLlama3, .dim = 4096,
     .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .vocab_size = 128256, .multiple_of = 1024,
     .ffn_dim_multiplier = 1.3},
    {.model = "llama3", .flavor = "8B_flex", .preset = "Llama-3.1-8B", .arch = A::kLlama3,
     .dim = 4096, .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .vocab_size = 128256,
     .multiple_of = 1024, .ffn_dim_multiplier = 1.3},
    {.model = "llama3", .flavor = "8B_varlen", .preset = "Llama-3.1-8B", .arch = A::kLlama3,
     .dim = 4096, .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .vocab_size = 128256,
     .multiple_of = 1024, .ffn_dim_multiplier = 1.3},
    {.model = "llama3", .flavor = "70B", .preset = "Llama-3.1-70B", .arch = A::kLlama3,
     .dim = 8192, .n_layers = 80, .n_heads = 64, .n_kv_heads = 8, .vocab_size = 128256,
     .multiple_of = 4096, .ffn_dim_multiplier = 1.3},
    {.model = "llama3", .flavor = "405B", .preset = "Llama-3.1-405B", .arch = A::kLlama3,
     .dim = 16384, .n_layers = 126, .n_heads = 128, .n_kv_heads = 8, .vocab_size = 128256,
     .multiple_of = 4096, .ffn_dim_multiplier = 1.2},
    // llama4/__init__.py llama4_args (vocab_size 202048, MoEArgs: 8 experts, 1 shared, top-1;
    // interleave_moe_layer_step 2, auto_scale_hidden_dim). The _irope flavors add NoPE layers
    // and chunked attention: the same weights and saved tensors.
    {.model = "llama4", .flavor = "debugmodel", .preset = nullptr, .arch = A::kLlama4, .dim = 256,
     .n_layers = 6, .n_heads = 16, .vocab_size = 2048, .multiple_of = 256, .num_experts = 8,
     .num_shared_experts = 1, .top_k = 1, .interleave_moe_layer_step = 2},
    {.model = "llama4", .flavor = "debugmodel_irope", .preset = nullptr, .arch = A::kLlama4,
     .dim = 256, .n_layers = 6, .n_heads = 16, .vocab_size = 2048, .multiple_of = 256,
     .num_experts = 8, .num_shared_experts = 1, .top_k = 1, .interleave_moe_layer_step = 2},
    {.model = "llama4", .flavor = "17bx16e", .preset = nullptr, .arch = A::kLlama4, .dim = 5120,
     .n_layers = 48, .n_heads = 40, .n_kv_heads = 8, .vocab_size = 202048, .multiple_of = 2048,
     .ffn_dim_multiplier = 1.2, .num_experts = 16, .num_shared_experts = 1, .top_k = 1,
     .interleave_moe_layer_step = 1},
    {.model = "llama4", .flavor = "17bx16e_irope", .preset = nullptr, .arch = A::kLlama4,
     .dim = 5120, .n_layers = 48, .n_heads = 40, .n_kv_heads = 8, .vocab_size = 202048,
     .multiple_of = 2048, .ffn_dim_multiplier = 1.2, .num_experts = 16, .num_shared_experts = 1,
     .top_k = 1, .interleave_moe_layer_step = 1},
    {.model = "llama4", .flavor = "17bx128e", .preset = nullptr, .arch = A::kLlama4, .dim = 5120,
     .n_layers = 48, .n_heads = 40, .n_kv_heads = 8, .vocab_size = 202048, .multiple_of = 2048,
     .ffn_dim_multiplier = 1.2, .num_experts = 128, .num_shared_experts = 1, .top_k = 1,
     .interleave_moe_layer_step = 2},
    {.model = "llama4", .flavor = "17bx128e_irope", .preset = nullptr, .arch = A::kLlama4,
     .dim = 5120, .n_layers = 48, .n_heads = 40, .n_kv_heads = 8, .vocab_size = 202048,
     .multiple_of = 2048, .ffn_dim_multiplier = 1.2, .num_experts = 128, .num_shared_experts = 1,
     .top_k = 1, .interleave_moe_layer_step = 2},
    // deepseek_v3/__init__.py deepseekv3_args.
    {.model = "deepseek_v3", .flavor = "debugmodel", .preset = nullptr, .arch = A::kDeepseekV3,
     .dim = 256, .n_layers = 6, .n_heads = 16, .vocab_size = 2048, .hidden_dim = 1024,
     .num_experts = 8, .num_shared_experts = 2, .top_k = 3, .moe_inter_dim = 256,
     .n_dense_layers = 1, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64,
     .v_head_dim = 128},
    {.model = "deepseek_v3", .flavor = "debugmodel_flex_attn", .preset = nullptr,
     .arch = A::kDeepseekV3, .dim = 256, .n_layers = 6, .n_heads = 16, .vocab_size = 2048,
     .hidden_dim = 1024, .num_experts = 8, .num_shared_experts = 2, .top_k = 3,
     .moe_inter_dim = 256, .n_dense_layers = 1, .kv_lora_rank = 512, .qk_nope_head_dim = 128,
     .qk_rope_head_dim = 64, .v_head_dim = 128},
    {.model = "deepseek_v3", .flavor = "16B", .preset = "DeepSeek-V2-Lite", .arch = A::kDeepseekV3,
     .dim = 2048, .n_layers = 27, .n_heads = 16, .vocab_size = 102400, .hidden_dim = 10944,
     .num_experts = 64, .num_shared_experts = 2, .top_k = 6, .moe_inter_dim = 1408,
     .n_dense_layers = 1, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64,
     .v_head_dim = 128},
    {.model = "deepseek_v3", .flavor = "236B", .preset = nullptr, .arch = A::kDeepseekV3,
     .dim = 5120, .n_layers = 60, .n_heads = 128, .vocab_size = 102400, .hidden_dim = 12288,
     .num_experts = 160, .num_shared_experts = 2, .top_k = 6, .moe_inter_dim = 1536,
     .n_dense_layers = 1, .q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128,
     .qk_rope_head_dim = 64, .v_head_dim = 128},
    {.model = "deepseek_v3", .flavor = "671B", .preset = nullptr, .arch = A::kDeepseekV3,
     .dim = 7168, .n_layers = 61, .n_heads = 128, .vocab_size = 129280, .hidden_dim = 18432,
     .num_experts = 256, .num_shared_experts = 1, .top_k = 8, .moe_inter_dim = 2048,
     .n_dense_layers = 3, .q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128,
     .qk_rope_head_dim = 64, .v_head_dim = 128},
    // qwen3/__init__.py qwen3_args (head_dim 128, qk_norm; MoE on every layer when enabled).
    {.model = "qwen3", .flavor = "debugmodel", .preset = nullptr, .arch = A::kQwen3, .dim = 256,
     .n_layers = 8, .n_heads = 16, .n_kv_heads = 8, .vocab_size = 2048, .hidden_dim = 3072,
     .head_dim = 128, .weight_tying = true},
    {.model = "qwen3", .flavor = "0.6B", .preset = "Qwen3-0.6B", .arch = A::kQwen3, .dim = 1024,
     .n_layers = 28, .n_heads = 16, .n_kv_heads = 8, .vocab_size = 151936, .hidden_dim = 3072,
     .head_dim = 128, .weight_tying = true},
    {.model = "qwen3", .flavor = "1.7B", .preset = "Qwen3-1.7B", .arch = A::kQwen3, .dim = 2048,
     .n_layers = 28, .n_heads = 16, .n_kv_heads = 8, .vocab_size = 151936, .hidden_dim = 6144,
     .head_dim = 128, .weight_tying = true},
    {.model = "qwen3", .flavor = "4B", .preset = "Qwen3-4B", .arch = A::kQwen3, .dim = 2560,
     .n_layers = 36, .n_heads = 32, .n_kv_heads = 8, .vocab_size = 151936, .hidden_dim = 9728,
     .head_dim = 128, .weight_tying = true},
    {.model = "qwen3", .flavor = "8B", .preset = "Qwen3-8B", .arch = A::kQwen3, .dim = 4096,
     .n_layers = 36, .n_heads = 32, .n_kv_heads = 8, .vocab_size = 151936, .hidden_dim = 12288,
     .head_dim = 128},
    {.model = "qwen3", .flavor = "14B", .preset = "Qwen3-14B", .arch = A::kQwen3, .dim = 5120,
     .n_layers = 40, .n_heads = 40, .n_kv_heads = 8, .vocab_size = 151936, .hidden_dim = 17408,
     .head_dim = 128},
    {.model = "qwen3", .flavor = "32B", .preset = "Qwen3-32B", .arch = A::kQwen3, .dim = 5120,
     .n_layers = 64, .n_heads = 64, .n_kv_heads = 8, .vocab_size = 151936, .hidden_dim = 25600,
     .head_dim = 128},
    {.model = "qwen3", .flavor = "debugmodel_moe", .preset = nullptr, .arch = A::kQwen3,
     .dim = 256, .n_layers = 8, .n_heads = 16, .n_kv_heads = 8, .vocab_size = 2048,
     .hidden_dim = 3072, .head_dim = 128, .num_experts = 64, .top_k = 8, .moe_inter_dim = 768},
    {.model = "qwen3", .flavor = "30B-A3B", .preset = "Qwen3-30B-A3B", .arch = A::kQwen3,
     .dim = 2048, .n_layers = 48, .n_heads = 32, .n_kv_heads = 4, .vocab_size = 151936,
     .hidden_dim = 6144, .head_dim = 128, .num_experts = 128, .top_k = 8, .moe_inter_dim = 768},
    {.model = "qwen3", .flavor = "235B-A22B", .preset = "Qwen3-235B-A22B", .arch = A::kQwen3,
     .dim = 4096, .n_layers = 94, .n_heads = 64, .n_kv_heads = 4, .vocab_size = 151936,
     .hidden_dim = 12288, .head_dim = 128, .num_experts = 128, .top_k = 8,
     .moe_inter_dim = 1536},
};
// clang-format on

constexpr const char* kModels[] = {"llama3", "llama4", "deepseek_v3", "qwen3"};

int64_t kv_heads(const TitanFlavor& f) { return f.n_kv_heads > 0 ? f.n_kv_heads : f.n_heads; }

// llama3/model/model.py FeedForward: int(2·hidden/3), times ffn_dim_multiplier (truncated), up
// to a multiple of multiple_of; Llama 4's MoE layers divide by top_k + shared experts first
// (llama4/model/model.py TransformerBlock, auto_scale_hidden_dim).
int64_t llama_ffn(const TitanFlavor& f, bool moe) {
  int64_t hidden = 2 * (4 * f.dim) / 3;
  if (f.ffn_dim_multiplier > 0)
    hidden = static_cast<int64_t>(f.ffn_dim_multiplier * static_cast<double>(hidden));
  if (moe) hidden = hidden / (f.top_k + f.num_shared_experts);
  return (hidden + f.multiple_of - 1) / f.multiple_of * f.multiple_of;
}

json llama3_config(const TitanFlavor& f, int64_t seq_len) {
  return {{"model_type", "llama"},
          {"hidden_size", f.dim},
          {"num_hidden_layers", f.n_layers},
          {"num_attention_heads", f.n_heads},
          {"num_key_value_heads", kv_heads(f)},
          {"intermediate_size", llama_ffn(f, false)},
          {"vocab_size", f.vocab_size},
          {"tie_word_embeddings", false},
          {"max_position_embeddings", seq_len}};
}

// Llama 4 as Megatron's GPT arguments (model/megatron_config.h): RMSNorm, SwiGLU, no biases,
// untied output, MoE layers with one shared expert of the routed width.
json llama4_config(const TitanFlavor& f, int64_t seq_len) {
  json pattern = json::array();
  for (bool moe : titan_moe_layers(f)) pattern.push_back(moe ? 1 : 0);
  const int64_t expert = llama_ffn(f, true);
  return {{"model_type", "megatron_gpt"},
          {"num_layers", f.n_layers},
          {"hidden_size", f.dim},
          {"ffn_hidden_size", llama_ffn(f, false)},
          {"num_attention_heads", f.n_heads},
          {"group_query_attention", true},
          {"num_query_groups", kv_heads(f)},
          {"kv_channels", f.dim / f.n_heads},
          {"swiglu", true},
          {"normalization", "RMSNorm"},
          {"disable_bias_linear", true},
          {"position_embedding_type", "rope"},
          {"untie_embeddings_and_output_weights", true},
          {"max_position_embeddings", seq_len},
          {"vocab_size", f.vocab_size},
          {"num_experts", f.num_experts},
          {"moe_router_topk", f.top_k},
          {"moe_ffn_hidden_size", expert},
          {"moe_shared_expert_intermediate_size", expert * f.num_shared_experts},
          {"moe_layer_freq", pattern}};
}

// DeepSeek as a deepseek_v2 config.json: the same MLA and MoE layers, without DeepSeek-V3's
// e_score_correction_bias parameter (torchtitan's expert_bias is a buffer) and without MTP.
json deepseek_config(const TitanFlavor& f, int64_t seq_len) {
  json c = {{"model_type", "deepseek_v2"},
            {"hidden_size", f.dim},
            {"num_hidden_layers", f.n_layers},
            {"num_attention_heads", f.n_heads},
            {"num_key_value_heads", f.n_heads},
            {"intermediate_size", f.hidden_dim},
            {"moe_intermediate_size", f.moe_inter_dim},
            {"n_routed_experts", f.num_experts},
            {"n_shared_experts", f.num_shared_experts},
            {"num_experts_per_tok", f.top_k},
            {"first_k_dense_replace", f.n_dense_layers},
            {"moe_layer_freq", 1},
            {"kv_lora_rank", f.kv_lora_rank},
            {"qk_nope_head_dim", f.qk_nope_head_dim},
            {"qk_rope_head_dim", f.qk_rope_head_dim},
            {"v_head_dim", f.v_head_dim},
            {"vocab_size", f.vocab_size},
            {"tie_word_embeddings", false},
            {"max_position_embeddings", seq_len}};
  c["q_lora_rank"] = f.q_lora_rank > 0 ? json(f.q_lora_rank) : json(nullptr);
  return c;
}

json qwen3_config(const TitanFlavor& f, int64_t seq_len) {
  json c = {{"model_type", f.num_experts > 0 ? "qwen3_moe" : "qwen3"},
            {"hidden_size", f.dim},
            {"num_hidden_layers", f.n_layers},
            {"num_attention_heads", f.n_heads},
            {"num_key_value_heads", kv_heads(f)},
            {"head_dim", f.head_dim},
            {"intermediate_size", f.hidden_dim},
            {"vocab_size", f.vocab_size},
            {"tie_word_embeddings", f.weight_tying},
            {"max_position_embeddings", seq_len}};
  if (f.num_experts > 0) {
    c["num_experts"] = f.num_experts;
    c["num_experts_per_tok"] = f.top_k;
    c["moe_intermediate_size"] = f.moe_inter_dim;
    c["decoder_sparse_step"] = 1;
  }
  return c;
}

}  // namespace

const std::vector<TitanFlavor>& titan_flavors() { return kFlavors; }

const TitanFlavor* find_titan_flavor(std::string_view model, std::string_view flavor) {
  for (const TitanFlavor& f : kFlavors)
    if (model == f.model && flavor == f.flavor) return &f;
  return nullptr;
}

std::string titan_model_names() {
  std::string out;
  for (const char* m : kModels) out += (out.empty() ? "" : ", ") + std::string(m);
  return out;
}

std::string titan_flavor_names(std::string_view model) {
  std::string out;
  for (const TitanFlavor& f : kFlavors)
    if (model == f.model) out += (out.empty() ? "" : ", ") + std::string(f.flavor);
  return out;
}

std::vector<bool> titan_moe_layers(const TitanFlavor& f) {
  std::vector<bool> out;
  if (f.num_experts == 0) return out;
  for (int64_t i = 0; i < f.n_layers; ++i) {
    switch (f.arch) {
      case A::kLlama4:  // (layer_id + 1) % interleave_moe_layer_step == 0
        out.push_back((i + 1) % f.interleave_moe_layer_step == 0);
        break;
      case A::kDeepseekV3:  // layers from n_dense_layers on
        out.push_back(i >= f.n_dense_layers);
        break;
      default:
        out.push_back(true);
    }
  }
  return out;
}

json titan_model_config(const TitanFlavor& f, int64_t seq_len) {
  switch (f.arch) {
    case A::kLlama3:
      return llama3_config(f, seq_len);
    case A::kLlama4:
      return llama4_config(f, seq_len);
    case A::kDeepseekV3:
      return deepseek_config(f, seq_len);
    case A::kQwen3:
      return qwen3_config(f, seq_len);
  }
  return json::object();
}

const TitanFlavor* titan_flavor_of_preset(std::string_view preset) {
  auto it = std::find_if(kFlavors.begin(), kFlavors.end(), [&](const TitanFlavor& f) {
    return f.preset != nullptr && preset == f.preset;
  });
  return it == kFlavors.end() ? nullptr : &*it;
}

}  // namespace vramplan::interop
