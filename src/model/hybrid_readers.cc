#include "model/hybrid_readers.h"

#include <string>

namespace vramplan::hf {
namespace {

// Mamba-2 sizes under the keys each family uses (transformers' NemotronHConfig /
// GraniteMoeHybridConfig).
void read_mamba2(Fields& f, Family family, ModelConfig& m) {
  Mamba2Config& c = m.mamba;
  if (family == Family::kNemotronH) {
    c.num_heads = f.required({"mamba_num_heads"});
    c.head_dim = f.required({"mamba_head_dim"});
    c.state_size = f.required({"ssm_state_size"});
    c.n_groups = f.integer_or("n_groups", 8);
    c.conv_kernel = f.integer_or("conv_kernel", 4);
    c.conv_bias = f.boolean("use_conv_bias", true);
    c.proj_bias = f.boolean("use_bias", false);
    c.out_proj_bias = c.proj_bias;
  } else {
    // GraniteMoeHybridConfig: mamba_n_heads (128), mamba_d_head ("auto" = expand·h / heads).
    c.num_heads = f.integer_or("mamba_n_heads", 128);
    const int64_t expand = f.integer_or("mamba_expand", 2);
    const json* head = f.get("mamba_d_head");
    if (head != nullptr && head->is_string())
      c.head_dim = c.num_heads > 0 ? expand * m.hidden / c.num_heads : 0;
    else
      c.head_dim =
          f.integer_or("mamba_d_head", c.num_heads > 0 ? expand * m.hidden / c.num_heads : 0);
    c.state_size = f.integer_or("mamba_d_state", 256);
    c.n_groups = f.integer_or("mamba_n_groups", 1);
    c.conv_kernel = f.integer_or("mamba_d_conv", 4);
    c.conv_bias = f.boolean("mamba_conv_bias", true);
    c.proj_bias = f.boolean("mamba_proj_bias", false);
    c.out_proj_bias = c.proj_bias;
  }
}

void read_deltanet(Fields& f, ModelConfig& m) {
  GatedDeltaNetConfig& c = m.deltanet;
  c.num_k_heads = f.integer_or("linear_num_key_heads", 16);
  c.num_v_heads = f.integer_or("linear_num_value_heads", 32);
  c.k_head_dim = f.integer_or("linear_key_head_dim", 128);
  c.v_head_dim = f.integer_or("linear_value_head_dim", 128);
  c.conv_kernel = f.integer_or("linear_conv_kernel_dim", 4);
  m.attention_output_gate = true;  // Qwen3NextAttention: q_proj yields query and gate
  m.qk_norm = true;
}

// A list of per-layer names (layer_types, layers_block_type) or nullptr with an error latched.
const json* layer_list(Fields& f, std::string_view key, const ModelConfig& m) {
  const json* list = f.get(key);
  if (list == nullptr) return nullptr;
  if (!list->is_array() || static_cast<int64_t>(list->size()) != m.num_layers) {
    f.fail({f.field(key), show(*list),
            "a list of " + std::to_string(m.num_layers) + " layer types (one per layer)", ""});
    return nullptr;
  }
  return list;
}

void unknown_kind(Fields& f, std::string_view key, const json& value, std::string accepted) {
  f.fail({f.field(key), show(value), std::move(accepted), "unsupported layer type"});
}

// Qwen3-Next: layer_types of "linear_attention" / "full_attention", else every
// full_attention_interval-th layer is full; MoE where (i + 1) % decoder_sparse_step == 0 and i is
// not in mlp_only_layers (the Qwen3-MoE rule, already in moe_layers).
void qwen3_next_layers(Fields& f, ModelConfig& m) {
  const json* types = layer_list(f, "layer_types", m);
  const int64_t interval = f.integer_or("full_attention_interval", 4);
  for (int64_t i = 0; i < m.num_layers && !f.error(); ++i) {
    bool full = (i + 1) % interval == 0;
    if (types != nullptr) {
      const json& t = (*types)[static_cast<size_t>(i)];
      if (t != "linear_attention" && t != "full_attention") {
        unknown_kind(f, "layer_types", t, "\"linear_attention\" or \"full_attention\"");
        return;
      }
      full = t == "full_attention";
    }
    m.layer_mixer.push_back(full ? LayerMixer::kAttention : LayerMixer::kGatedDeltaNet);
  }
}

// Nemotron-H: one mixer per block. hybrid_override_pattern characters M (Mamba-2), * (attention),
// - (MLP), E (MoE); newer files spell them out in layers_block_type.
void nemotron_layers(Fields& f, ModelConfig& m) {
  std::string pattern;
  if (const json* list = f.get("layers_block_type")) {
    if (layer_list(f, "layers_block_type", m) == nullptr) return;
    for (const json& t : *list) {
      if (t == "mamba")
        pattern += 'M';
      else if (t == "attention")
        pattern += '*';
      else if (t == "mlp")
        pattern += '-';
      else if (t == "moe")
        pattern += 'E';
      else
        return unknown_kind(f, "layers_block_type", t, "mamba, attention, mlp or moe");
    }
  } else {
    std::optional<std::string> text = f.string("hybrid_override_pattern");
    if (!text) {
      if (!f.error())
        f.fail({f.field("hybrid_override_pattern"), "missing", "a string of M, *, - and E",
                "required by nemotron_h"});
      return;
    }
    pattern = *text;
    if (static_cast<int64_t>(pattern.size()) != m.num_layers) {
      f.fail({f.field("hybrid_override_pattern"), shorten(pattern),
              std::to_string(m.num_layers) + " characters (one per layer)", ""});
      return;
    }
  }
  m.moe_layers.assign(static_cast<size_t>(m.num_layers), false);
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c != 'M' && c != '*' && c != '-' && c != 'E') {
      f.fail({f.field("hybrid_override_pattern"), shorten(pattern), "only M, *, - and E", ""});
      return;
    }
    m.layer_mixer.push_back(c == 'M'   ? LayerMixer::kMamba2
                            : c == '*' ? LayerMixer::kAttention
                                       : LayerMixer::kNone);
    m.layer_has_mlp.push_back(c == '-' || c == 'E');
    m.moe_layers[i] = c == 'E' && m.is_moe();
  }
}

// Granite-4.0-H: layer_types of "mamba" / "attention"; every layer has the MoE (when experts
// exist) and the shared MLP.
void granite_layers(Fields& f, ModelConfig& m) {
  const json* types = layer_list(f, "layer_types", m);
  for (int64_t i = 0; i < m.num_layers && !f.error(); ++i) {
    LayerMixer mixer = LayerMixer::kAttention;
    if (types != nullptr) {
      const json& t = (*types)[static_cast<size_t>(i)];
      if (t == "mamba")
        mixer = LayerMixer::kMamba2;
      else if (t != "attention")
        return unknown_kind(f, "layer_types", t, "mamba or attention");
    }
    m.layer_mixer.push_back(mixer);
  }
  m.moe_layers.assign(static_cast<size_t>(m.num_layers), m.is_moe());
}

}  // namespace

bool is_hybrid_family(Family family) {
  return family == Family::kQwen3Next || family == Family::kNemotronH ||
         family == Family::kGraniteHybrid;
}

void read_hybrid_features(Fields& f, Family family, ModelConfig& m) {
  switch (family) {
    case Family::kQwen3Next:
      read_deltanet(f, m);
      if (m.is_moe()) {
        // One shared expert of shared_expert_intermediate_size, gated by a Linear(h, 1).
        m.moe.shared_expert_ffn = f.integer_or("shared_expert_intermediate_size", 0, 0);
        m.moe.shared_experts = m.moe.shared_expert_ffn > 0 ? 1 : 0;
        m.moe.shared_expert_gate = m.moe.shared_experts > 0;
      }
      break;
    case Family::kNemotronH:
      read_mamba2(f, family, m);
      m.mlp = MlpKind::kPlain;  // relu² up/down
      m.norms_per_layer = 1;    // one pre-norm per block
      m.mlp_bias = f.boolean("mlp_bias", false);
      if (m.is_moe()) {
        m.moe.shared_experts = f.integer_or("n_shared_experts", 1, 0);
        m.moe.shared_expert_ffn = f.integer_or("moe_shared_expert_intermediate_size", 0, 0);
        if (m.moe.shared_expert_ffn == 0) m.moe.shared_experts = 0;
        m.moe.router_correction_bias = true;  // NemotronHTopkRouter e_score_correction_bias
      }
      break;
    case Family::kGraniteHybrid: {
      read_mamba2(f, family, m);
      // GraniteMoeHybridMoE: router (E x h), experts of intermediate_size; shared_mlp of
      // shared_intermediate_size on every layer.
      const int64_t shared = f.integer_or("shared_intermediate_size", 0, 0);
      if (m.is_moe()) {
        m.moe.shared_experts = shared > 0 ? 1 : 0;
        m.moe.shared_expert_ffn = shared;
      } else {
        m.ffn = shared;
      }
      break;
    }
    default:
      break;
  }
}

void read_hybrid_layers(Fields& f, Family family, ModelConfig& m) {
  m.layer_mixer.clear();
  m.layer_has_mlp.clear();
  if (family == Family::kQwen3Next) qwen3_next_layers(f, m);
  if (family == Family::kNemotronH) nemotron_layers(f, m);
  if (family == Family::kGraniteHybrid) granite_layers(f, m);
  // Attention layers attend to the whole context in all three.
  m.layer_attention.assign(static_cast<size_t>(m.num_layers), LayerAttention::kFull);
}

}  // namespace vramplan::hf
