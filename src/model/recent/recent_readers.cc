#include "model/recent/recent_readers.h"

#include <string>

namespace vramplan::hf {
namespace {

// A key that is an integer or a per-layer list of equal integers (Hunyuan-A13B writes
// "moe_topk": [8, 8, ...]); vramplan's MoE has one value for all layers.
int64_t uniform_integer(Fields& f, std::string_view key, int64_t fallback, const ModelConfig& m) {
  const json* value = f.get(key);
  if (value == nullptr || !value->is_array()) return f.integer_or(key, fallback);
  if (value->empty() || static_cast<int64_t>(value->size()) != m.num_layers ||
      !(*value)[0].is_number_integer() || (*value)[0].get<int64_t>() < 1) {
    f.fail({f.field(key), show(*value),
            "a positive integer or a list of " + std::to_string(m.num_layers) + " of them", ""});
    return fallback;
  }
  for (const json& item : *value) {
    if (item != (*value)[0]) {
      f.fail({f.field(key), show(*value), "the same value for every layer",
              "per-layer differences are not supported"});
      return fallback;
    }
  }
  return (*value)[0].get<int64_t>();
}

// HunYuanMoEV1Moe (transformers 5): gate.wg (E x h), experts of intermediate_size and a
// shared_mlp of intermediate_size on every layer; num_experts and moe_topk may be lists.
void hunyuan_moe(Fields& f, ModelConfig& m) {
  m.qk_norm = true;  // query_layernorm, key_layernorm of one head's width
  m.moe.num_experts = uniform_integer(f, "num_experts", 1, m);
  m.moe.top_k = uniform_integer(f, "moe_topk", 1, m);
  m.moe.expert_ffn = m.ffn;
  m.moe.shared_experts = 1;
  m.moe.shared_expert_ffn = m.ffn;
}

// Jamba's Mamba-1 mixer (JambaMambaMixer): d_inner = mamba_expand·h, dt rank mamba_dt_rank
// ("auto": ceil(h/16)), held as d_inner heads of width 1 (model.h).
void jamba(Fields& f, ModelConfig& m) {
  Mamba2Config& c = m.mamba;
  const int64_t d_inner = f.integer_or("mamba_expand", 2) * m.hidden;
  const json* rank = f.get("mamba_dt_rank");
  c.dt_rank = rank != nullptr && rank->is_string()
                  ? (m.hidden + 15) / 16
                  : f.integer_or("mamba_dt_rank", (m.hidden + 15) / 16);
  c.num_heads = d_inner;
  c.head_dim = 1;
  c.n_groups = 0;
  c.state_size = f.integer_or("mamba_d_state", 16);
  c.conv_kernel = f.integer_or("mamba_d_conv", 4);
  c.conv_bias = f.boolean("mamba_conv_bias", true);
  c.proj_bias = c.out_proj_bias = f.boolean("mamba_proj_bias", false);
  c.gated_norm = false;
  // JambaSparseMoeBlock only where num_experts > 1; one "expert" is a plain JambaMLP.
  if (m.moe.num_experts <= 1) m.moe = MoeConfig{};
}

// FalconH1Mixer: mamba_d_ssm (or mamba_expand·h) channels in mamba_n_heads heads; in_proj takes
// mamba_proj_bias, out_proj projectors_bias; the gated RMSNorm only with mamba_rms_norm.
void falcon_h1(Fields& f, ModelConfig& m) {
  Mamba2Config& c = m.mamba;
  c.num_heads = f.integer_or("mamba_n_heads", 128);
  const int64_t d_ssm = f.integer_or("mamba_d_ssm", f.integer_or("mamba_expand", 2) * m.hidden);
  const json* head = f.get("mamba_d_head");
  c.head_dim = head != nullptr && head->is_string()
                   ? (c.num_heads > 0 ? d_ssm / c.num_heads : 0)
                   : f.integer_or("mamba_d_head", c.num_heads > 0 ? d_ssm / c.num_heads : 0);
  if (c.num_heads * c.head_dim != d_ssm && !f.error()) {
    f.fail({f.field("mamba_d_head"), std::to_string(c.head_dim),
            "mamba_d_ssm / mamba_n_heads = " + std::to_string(d_ssm) + " / " +
                std::to_string(c.num_heads),
            "FalconH1Config requires heads × head width = d_ssm"});
  }
  c.state_size = f.integer_or("mamba_d_state", 256);
  c.n_groups = f.integer_or("mamba_n_groups", 1);
  c.conv_kernel = f.integer_or("mamba_d_conv", 4);
  c.conv_bias = f.boolean("mamba_conv_bias", true);
  c.proj_bias = f.boolean("mamba_proj_bias", false);
  c.out_proj_bias = f.boolean("projectors_bias", false);
  c.gated_norm = f.boolean("mamba_rms_norm", false);
  m.parallel_mamba = true;
  m.mlp_bias = f.boolean("mlp_bias", false);
}

// Llama4TextMoe: router (E x h, no bias), experts of intermediate_size and one shared expert of
// intermediate_size; the dense layers' Llama4TextMLP has intermediate_size_mlp.
void llama4(Fields& f, ModelConfig& m) {
  if (m.is_moe()) {
    m.moe.expert_ffn = m.ffn;
    m.moe.shared_experts = 1;
    m.moe.shared_expert_ffn = m.ffn;
  }
  m.ffn = f.integer_or("intermediate_size_mlp", 16384);
}

// A list of layer indices (moe_layers, cross_attention_layers) as per-layer flags.
std::vector<bool> index_flags(Fields& f, std::string_view key, const json& list, int64_t layers) {
  std::vector<bool> flags(static_cast<size_t>(layers), false);
  if (!list.is_array()) {
    f.fail({f.field(key), show(list), "a list of layer indices", ""});
    return flags;
  }
  for (const json& index : list) {
    if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() >= layers) {
      f.fail(
          {f.field(key), show(list), "layer indices from 0 to " + std::to_string(layers - 1), ""});
      return flags;
    }
    flags[static_cast<size_t>(index.get<int64_t>())] = true;
  }
  return flags;
}

// Llama4TextConfig: moe_layers, else every interleave_moe_layer_step-th layer (step-1, 2·step-1,
// ...); no_rope_layers (1 = RoPE) else every no_rope_layer_interval-th layer is NoPE. RoPE layers
// attend within attention_chunk_size-token chunks, held like a sliding window (vLLM's
// ChunkedLocalAttentionSpec keeps one chunk of KV per sequence).
void llama4_layers(Fields& f, ModelConfig& m) {
  const auto layers = static_cast<size_t>(m.num_layers);
  if (m.is_moe()) {
    if (const json* list = f.get("moe_layers")) {
      m.moe_layers = index_flags(f, "moe_layers", *list, m.num_layers);
    } else {
      const int64_t step = f.integer_or("interleave_moe_layer_step", 1);
      for (size_t i = 0; i < layers; ++i)
        m.moe_layers[i] = (static_cast<int64_t>(i) + 1) % step == 0;
    }
  }
  std::vector<bool> rope(layers, true);
  if (const json* list = f.get("no_rope_layers");
      list != nullptr && !(list->is_array() && list->empty())) {
    if (!list->is_array() || list->size() != layers) {
      f.fail({f.field("no_rope_layers"), show(*list),
              "a list of " + std::to_string(m.num_layers) + " flags (1 = RoPE, 0 = NoPE)", ""});
      return;
    }
    for (size_t i = 0; i < layers; ++i) rope[i] = (*list)[i] != 0;
  } else {
    const int64_t interval = f.integer_or("no_rope_layer_interval", 4);
    for (size_t i = 0; i < layers; ++i) rope[i] = (static_cast<int64_t>(i) + 1) % interval != 0;
  }
  const int64_t chunk = f.integer_or("attention_chunk_size", 0, 0);
  m.layer_attention.assign(layers, LayerAttention::kFull);
  if (chunk == 0) return;
  m.sliding_window = chunk;
  for (size_t i = 0; i < layers; ++i)
    if (rope[i]) m.layer_attention[i] = LayerAttention::kSliding;
}

// JambaConfig.layers_block_type / layers_num_experts: attention where i % attn_layer_period ==
// attn_layer_offset, MoE where i % expert_layer_period == expert_layer_offset.
void jamba_layers(Fields& f, ModelConfig& m) {
  const int64_t attn_period = f.integer_or("attn_layer_period", 8);
  const int64_t attn_offset = f.integer_or("attn_layer_offset", 4, 0);
  const int64_t expert_period = f.integer_or("expert_layer_period", 2);
  const int64_t expert_offset = f.integer_or("expert_layer_offset", 1, 0);
  if (attn_offset >= attn_period && !f.error())
    f.fail({f.field("attn_layer_offset"), std::to_string(attn_offset),
            "less than attn_layer_period (" + std::to_string(attn_period) + ")", ""});
  if (expert_offset >= expert_period && !f.error())
    f.fail({f.field("expert_layer_offset"), std::to_string(expert_offset),
            "less than expert_layer_period (" + std::to_string(expert_period) + ")", ""});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    m.layer_mixer.push_back(i % attn_period == attn_offset ? LayerMixer::kAttention
                                                           : LayerMixer::kMamba2);
    m.moe_layers[static_cast<size_t>(i)] = m.is_moe() && i % expert_period == expert_offset;
  }
}

}  // namespace

bool is_recent_family(Family family) {
  return family == Family::kHunyuanMoe || family == Family::kApertus || family == Family::kJamba ||
         family == Family::kFalconH1 || family == Family::kLlama4 || family == Family::kMllama;
}

void read_recent_features(Fields& f, Family family, ModelConfig& m) {
  switch (family) {
    case Family::kHunyuanMoe:
      hunyuan_moe(f, m);
      break;
    case Family::kApertus: {
      // ApertusMLP: up/down only; the xIELU activation holds alpha_p and alpha_n. Its q_norm
      // and k_norm are built unconditionally.
      m.mlp = MlpKind::kPlain;
      m.qk_norm = true;
      m.mlp_bias = f.boolean("mlp_bias", false);
      m.mlp_activation_params = f.string("hidden_act").value_or("xielu") == "xielu" ? 2 : 0;
      break;
    }
    case Family::kJamba:
      jamba(f, m);
      break;
    case Family::kFalconH1:
      falcon_h1(f, m);
      break;
    case Family::kLlama4:
      llama4(f, m);
      break;
    case Family::kMllama:
      m.extra_embedding_rows = 8;  // MllamaTextModel: nn.Embedding(vocab_size + 8, h)
      break;
    default:
      break;
  }
}

void read_recent_layers(Fields& f, Family family, ModelConfig& m) {
  m.layer_mixer.clear();
  m.layer_attention.assign(static_cast<size_t>(m.num_layers), LayerAttention::kFull);
  m.moe_layers.resize(static_cast<size_t>(m.num_layers), false);
  if (family == Family::kJamba) jamba_layers(f, m);
  if (family == Family::kLlama4) llama4_layers(f, m);
  if (family == Family::kMllama) {
    const json* list = f.get("cross_attention_layers");
    if (list == nullptr) return;  // a text-only checkpoint
    std::vector<bool> cross = index_flags(f, "cross_attention_layers", *list, m.num_layers);
    for (bool c : cross)
      m.layer_mixer.push_back(c ? LayerMixer::kCrossAttention : LayerMixer::kAttention);
  }
}

}  // namespace vramplan::hf
