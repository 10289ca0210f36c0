// Reads Hugging Face config.json files into a ModelConfig, family by family, following what
// transformers instantiates for each model_type (and its defaults where a file omits a key).
#include "vramplan/hf_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vramplan {
namespace {

using nlohmann::json;

constexpr size_t kShownChars = 40;  // values quoted in errors are cut to this length

std::string shorten(std::string text) {
  if (text.size() > kShownChars) text = text.substr(0, kShownChars) + "...";
  return text;
}

std::string show(const json& value) {
  return shorten(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string range_text(int64_t min) {
  return min >= 1 ? "a positive integer" : "a non-negative integer";
}

// ---------------------------------------------------------------------------------------------
// Fields: typed access to one JSON object. The first error is latched and later reads return
// defaults, so that readers stay straight-line code instead of checking after every field.

class Fields {
 public:
  Fields(const json& object, std::string prefix, const json* defaults)
      : object_(object), prefix_(std::move(prefix)), defaults_(defaults) {}

  std::string field(std::string_view key) const { return prefix_ + std::string(key); }
  // The object itself as a field: "config" or "config.text_config".
  std::string scope() const { return prefix_.substr(0, prefix_.size() - 1); }

  // The value of `key`, falling back to the family defaults; nullptr when absent or null.
  const json* get(std::string_view key) const {
    const json* value = find(object_, key);
    if (value == nullptr && defaults_ != nullptr) value = find(*defaults_, key);
    return value;
  }
  bool has(std::string_view key) const { return get(key) != nullptr; }

  // An integer >= min, or nullopt when absent or null.
  std::optional<int64_t> integer(std::string_view key, int64_t min = 1) {
    const json* value = get(key);
    if (value == nullptr || error_) return std::nullopt;
    std::optional<int64_t> number = as_integer(*value);
    if (!number || *number < min) {
      fail({field(key), show(*value), range_text(min), ""});
      return std::nullopt;
    }
    return number;
  }

  int64_t integer_or(std::string_view key, int64_t fallback, int64_t min = 1) {
    return integer(key, min).value_or(fallback);
  }

  // The first of `keys` that is present; an error naming the first key when none is.
  int64_t required(std::initializer_list<std::string_view> keys, int64_t min = 1) {
    for (std::string_view key : keys) {
      if (has(key)) return integer(key, min).value_or(0);
    }
    std::string_view key = *keys.begin();
    fail({field(key), object_.contains(key) ? "null" : "missing", range_text(min),
          "required by this model_type"});
    return 0;
  }

  bool boolean(std::string_view key, bool fallback) {
    const json* value = get(key);
    if (value == nullptr || error_) return fallback;
    if (!value->is_boolean()) {
      fail({field(key), show(*value), "true or false", ""});
      return fallback;
    }
    return value->get<bool>();
  }

  std::optional<std::string> string(std::string_view key) {
    const json* value = get(key);
    if (value == nullptr || error_) return std::nullopt;
    if (!value->is_string()) {
      fail({field(key), show(*value), "a string", ""});
      return std::nullopt;
    }
    return value->get<std::string>();
  }

  void fail(Error error) {
    if (!error_) error_ = std::move(error);
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  static const json* find(const json& object, std::string_view key) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }

  // Accepts JSON integers and integral floats ("4096.0"); sizes are never fractional.
  static std::optional<int64_t> as_integer(const json& value) {
    if (value.is_number_integer()) {
      if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) {
        return std::nullopt;
      }
      return value.get<int64_t>();
    }
    if (value.is_number_float()) {
      double number = value.get<double>();
      // Beyond 2^62 the value is absurd anyway; validate_model explains the real bounds.
      if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 0x1p62) {
        return static_cast<int64_t>(number);
      }
    }
    return std::nullopt;
  }

  const json& object_;
  std::string prefix_;
  const json* defaults_;
  std::optional<Error> error_;
};

// ---------------------------------------------------------------------------------------------
// Families.

enum class Family {
  kLlama,
  kMistral,
  kMixtral,
  kQwen2,
  kQwen3,
  kQwen3Moe,
  kDeepseek,
  kGemma2,
  kGemma3,
  kPhi3,
  kGpt2,
  kGptOss,
  kOlmo2,
  kUnknown,
};

Family family_of(std::string_view type) {
  static const std::map<std::string_view, Family> kFamilies = {
      {"llama", Family::kLlama},
      {"mistral", Family::kMistral},
      {"mixtral", Family::kMixtral},
      {"qwen2", Family::kQwen2},
      {"qwen3", Family::kQwen3},
      {"qwen3_moe", Family::kQwen3Moe},
      {"deepseek_v2", Family::kDeepseek},
      {"deepseek_v3", Family::kDeepseek},
      {"gemma2", Family::kGemma2},
      {"gemma3", Family::kGemma3},
      {"gemma3_text", Family::kGemma3},
      {"phi3", Family::kPhi3},
      {"gpt2", Family::kGpt2},
      {"gpt_oss", Family::kGptOss},
      {"olmo2", Family::kOlmo2},
  };
  auto it = kFamilies.find(type);
  return it == kFamilies.end() ? Family::kUnknown : it->second;
}

// Gemma3TextConfig defaults: the multimodal gemma3 files omit every text_config key that equals
// its default (vocab_size among them), so they must be supplied here.
const json& gemma3_text_defaults() {
  static const json kDefaults = {
      {"vocab_size", 262208},      {"hidden_size", 2304},
      {"intermediate_size", 9216}, {"num_hidden_layers", 26},
      {"num_attention_heads", 8},  {"num_key_value_heads", 4},
      {"head_dim", 256},           {"max_position_embeddings", 131072},
      {"sliding_window", 4096},    {"sliding_window_pattern", 6},
  };
  return kDefaults;
}

// transformers' tie_word_embeddings default per family (PretrainedConfig says true; most decoder
// configs override it to false).
bool ties_by_default(Family family) {
  return family == Family::kGemma2 || family == Family::kGemma3 || family == Family::kGpt2;
}

// Families whose attention projections take their biases from config.attention_bias (q, k, v
// and o alike). Mistral, Mixtral and Phi-3 hard-code no bias; Qwen2 hard-codes q/k/v bias.
bool honors_attention_bias(Family family) {
  switch (family) {
    case Family::kLlama:
    case Family::kQwen3:
    case Family::kQwen3Moe:
    case Family::kDeepseek:
    case Family::kGemma2:
    case Family::kGemma3:
    case Family::kGptOss:
    case Family::kOlmo2:
    case Family::kUnknown:
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Readers, one concern each. All write into `m` and latch errors in `f`.

void read_standard_sizes(Fields& f, ModelConfig& m) {
  m.hidden = f.required({"hidden_size"});
  m.num_layers = f.required({"num_hidden_layers"});
  m.num_heads = f.required({"num_attention_heads"});
  m.num_kv_heads = f.integer_or("num_key_value_heads", m.num_heads);
  // transformers: getattr(config, "head_dim", None) or hidden_size // num_attention_heads.
  m.head_dim = f.integer_or("head_dim", m.num_heads > 0 ? m.hidden / m.num_heads : 0);
  m.ffn = f.required({"intermediate_size"});
  m.vocab = f.required({"vocab_size"});
  m.max_position_embeddings = f.integer_or("max_position_embeddings", 0, 0);
}

void read_gpt2(Fields& f, ModelConfig& m) {
  m.hidden = f.required({"n_embd", "hidden_size"});
  m.num_layers = f.required({"n_layer", "num_hidden_layers"});
  m.num_heads = f.required({"n_head", "num_attention_heads"});
  m.num_kv_heads = m.num_heads;
  m.head_dim = m.num_heads > 0 ? m.hidden / m.num_heads : 0;
  // GPT2MLP: n_inner or 4 * n_embd (an absurd n_embd is reported by validation, not overflowed).
  m.ffn = f.integer_or("n_inner", m.hidden <= INT64_MAX / 4 ? 4 * m.hidden : 0);
  m.vocab = f.required({"vocab_size"});
  m.max_position_embeddings = f.integer_or("n_positions", 1024);  // GPT2Config default
  m.mlp = MlpKind::kPlain;
  m.norm = NormKind::kLayerNorm;
  m.learned_position_embeddings = true;
  m.qkv_bias = m.attn_out_bias = m.mlp_bias = true;  // Conv1D layers always carry a bias
}

void read_mla(Fields& f, ModelConfig& m) {
  m.attention = AttentionKind::kMla;
  m.mla.q_lora_rank = f.integer_or("q_lora_rank", 0, 0);  // null: q projected directly
  m.mla.kv_lora_rank = f.required({"kv_lora_rank"});
  m.mla.qk_nope_head_dim = f.required({"qk_nope_head_dim"}, 0);
  m.mla.qk_rope_head_dim = f.required({"qk_rope_head_dim"}, 0);
  m.mla.v_head_dim = f.required({"v_head_dim"});
  // Attention scores use the full query/key width; every head has its own latent-derived k/v.
  // (Absurd widths are reported by validation; the sum must not overflow before that.)
  int64_t nope = m.mla.qk_nope_head_dim, rope = m.mla.qk_rope_head_dim;  // both >= 0 here
  m.head_dim = nope > INT64_MAX - rope ? INT64_MAX : nope + rope;
  m.num_kv_heads = m.num_heads;
}

void read_family_features(Fields& f, Family family, ModelConfig& m) {
  if (honors_attention_bias(family)) {
    m.qkv_bias = m.attn_out_bias = f.boolean("attention_bias", false);
  }
  if (family == Family::kLlama || family == Family::kUnknown) {
    m.mlp_bias = f.boolean("mlp_bias", false);
  }
  switch (family) {
    case Family::kQwen2:
      m.qkv_bias = true;  // Qwen2Attention: q/k/v with bias, o without
      break;
    case Family::kQwen3:
    case Family::kQwen3Moe:
      m.qk_norm = true;
      break;
    case Family::kGemma2:
      m.norms_per_layer = 4;  // pre/post attention and pre/post feed-forward
      break;
    case Family::kGemma3:
      m.norms_per_layer = 4;
      m.qk_norm = true;
      break;
    case Family::kOlmo2:
      m.qk_norm_full_width = true;  // q_norm over a*d, k_norm over g*d
      break;
    case Family::kGptOss:
      m.attention_sinks = true;
      break;
    case Family::kDeepseek:
      read_mla(f, m);
      break;
    default:
      break;
  }
}

// MoE layer placement, per family.
std::vector<bool> moe_layer_flags(Fields& f, Family family, const ModelConfig& m) {
  std::vector<bool> flags(static_cast<size_t>(std::max<int64_t>(m.num_layers, 0)), false);
  if (m.moe.num_experts == 0) return flags;
  int64_t first_dense = 0, every = 1;
  std::set<int64_t> dense_only;
  if (family == Family::kDeepseek) {
    first_dense = f.integer_or("first_k_dense_replace", 0, 0);
    every = f.integer_or("moe_layer_freq", 1);
  } else if (family == Family::kQwen3Moe) {
    every = f.integer_or("decoder_sparse_step", 1);
    if (const json* list = f.get("mlp_only_layers")) {
      if (!list->is_array()) {
        f.fail({f.field("mlp_only_layers"), show(*list), "a list of layer indices", ""});
        return flags;
      }
      for (const json& index : *list) {
        if (!index.is_number_integer() || index.get<int64_t>() < 0 ||
            index.get<int64_t>() >= m.num_layers) {
          f.fail({f.field("mlp_only_layers"), show(*list),
                  "layer indices from 0 to " + std::to_string(m.num_layers - 1), ""});
          return flags;
        }
        dense_only.insert(index.get<int64_t>());
      }
    }
  }
  for (int64_t i = 0; i < m.num_layers; ++i) {
    bool moe = i >= first_dense && !dense_only.contains(i);
    // DeepSeek: layer_idx % moe_layer_freq == 0; Qwen MoE: (layer_idx + 1) % decoder_sparse_step.
    moe = moe && (family == Family::kDeepseek ? i % every == 0 : (i + 1) % every == 0);
    flags[static_cast<size_t>(i)] = moe;
  }
  return flags;
}

void read_moe(Fields& f, Family family, ModelConfig& m) {
  for (std::string_view key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (f.has(key)) {
      m.moe.num_experts = f.integer_or(key, 0, 0);
      break;
    }
  }
  if (m.moe.num_experts > 0) {
    m.moe.top_k = f.required({"num_experts_per_tok", "experts_per_token"});
    // Mixtral and gpt-oss size their experts with intermediate_size.
    m.moe.expert_ffn =
        f.has("moe_intermediate_size") ? f.integer_or("moe_intermediate_size", 0) : m.ffn;
    m.moe.shared_experts = f.integer_or("n_shared_experts", 0, 0);
    if (m.moe.shared_experts > 0) m.moe.shared_expert_ffn = m.moe.expert_ffn;
    if (family == Family::kGptOss) m.moe.router_bias = m.moe.expert_bias = true;
    // DeepSeek-V3's noaux_tc routing adds e_score_correction_bias; the published totals count it.
    std::string method = f.string("topk_method").value_or("");
    m.moe.router_correction_bias =
        family == Family::kDeepseek && (m.model_type == "deepseek_v3" || method == "noaux_tc");
  }
}

// Layer attention from an explicit layer_types list.
void read_layer_types(Fields& f, const json& types, ModelConfig& m) {
  if (!types.is_array() || static_cast<int64_t>(types.size()) != m.num_layers) {
    f.fail({f.field("layer_types"), show(types),
            "a list of " + std::to_string(m.num_layers) + " layer types (one per layer)", ""});
    return;
  }
  for (const json& type : types) {
    if (type == "sliding_attention") {
      m.layer_attention.push_back(LayerAttention::kSliding);
    } else if (type == "full_attention") {
      m.layer_attention.push_back(LayerAttention::kFull);
    } else {
      f.fail({f.field("layer_types"), show(type), "\"full_attention\" or \"sliding_attention\"",
              "unsupported layer type"});
      return;
    }
  }
}

// Which layers slide when the file has no layer_types: the family's own rule in transformers.
bool slides(Fields& f, Family family, int64_t layer) {
  switch (family) {
    case Family::kMistral:
    case Family::kMixtral:
    case Family::kPhi3:
      return f.has("sliding_window");  // a non-null window applies to every layer
    case Family::kQwen2:
    case Family::kQwen3:
    case Family::kQwen3Moe:
      return f.boolean("use_sliding_window", false) && f.has("sliding_window") &&
             layer >= f.integer_or("max_window_layers", 28, 0);
    case Family::kGemma2:
    case Family::kGptOss:
      return layer % 2 == 0;  // sliding, full, sliding, ...
    case Family::kGemma3: {
      int64_t pattern = f.integer_or("sliding_window_pattern", 6);
      return (layer + 1) % pattern != 0;  // every pattern-th layer is full
    }
    default:
      return false;
  }
}

void read_attention_layout(Fields& f, Family family, ModelConfig& m) {
  m.layer_attention.clear();
  if (const json* types = f.get("layer_types")) {
    read_layer_types(f, *types, m);
  } else {
    for (int64_t i = 0; i < m.num_layers && !f.error(); ++i) {
      m.layer_attention.push_back(slides(f, family, i) ? LayerAttention::kSliding
                                                       : LayerAttention::kFull);
    }
  }
  bool any_sliding = std::find(m.layer_attention.begin(), m.layer_attention.end(),
                               LayerAttention::kSliding) != m.layer_attention.end();
  if (!any_sliding) return;
  // gpt-oss defaults its window to 128 when the key is absent.
  int64_t fallback = family == Family::kGptOss ? 128 : 0;
  m.sliding_window = f.integer_or("sliding_window", fallback);
  if (m.sliding_window == 0 && !f.error()) {
    f.fail({f.field("sliding_window"), "missing", "a positive integer",
            "layers are sliding-window but no window is given"});
  }
}

// Maps a validate_model field (a ModelConfig member) to the JSON key it was read from.
std::string json_field(const Fields& f, const std::string& member) {
  static const std::map<std::string, std::vector<std::string_view>> kKeys = {
      {"hidden", {"hidden_size", "n_embd"}},
      {"num_layers", {"num_hidden_layers", "n_layer"}},
      {"num_heads", {"num_attention_heads", "n_head"}},
      {"num_kv_heads", {"num_key_value_heads", "num_attention_heads"}},
      {"head_dim", {"head_dim", "hidden_size"}},
      {"ffn", {"intermediate_size", "n_inner"}},
      {"vocab", {"vocab_size"}},
      {"max_position_embeddings", {"max_position_embeddings", "n_positions"}},
      {"sliding_window", {"sliding_window"}},
      {"mtp_layers", {"num_nextn_predict_layers"}},
      {"moe.num_experts", {"num_local_experts", "num_experts", "n_routed_experts"}},
      {"moe.top_k", {"num_experts_per_tok", "experts_per_token"}},
      {"moe.expert_ffn", {"moe_intermediate_size", "intermediate_size"}},
      {"moe.shared_experts", {"n_shared_experts"}},
      {"moe.shared_expert_ffn", {"moe_intermediate_size"}},
      {"mla.q_lora_rank", {"q_lora_rank"}},
      {"mla.kv_lora_rank", {"kv_lora_rank"}},
      {"mla.qk_nope_head_dim", {"qk_nope_head_dim"}},
      {"mla.qk_rope_head_dim", {"qk_rope_head_dim"}},
      {"mla.v_head_dim", {"v_head_dim"}},
  };
  if (member == "model") return f.scope();  // the sizes together, not one of them
  auto it = kKeys.find(member);
  if (it == kKeys.end()) return f.field(member);
  for (std::string_view key : it->second) {
    if (f.has(key)) return f.field(key);
  }
  return f.field(it->second.front());
}

Error not_json(std::string_view text, std::string_view name, std::string reason) {
  std::string value = name.empty() ? shorten(std::string(text)) : std::string(name);
  return {"config", value, "a Hugging Face config.json object", std::move(reason)};
}

// A SAX handler that accepts everything and keeps the parser's message, so that malformed input
// gets a precise reason ("unexpected end of input at line 3, column 5") without exceptions.
struct SyntaxError : nlohmann::json_sax<json> {
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& error) override {
    message = error.what();
    // Drop the "[json.exception.parse_error.101] " tag: users need the position and cause.
    if (size_t end = message.find("] "); message.starts_with("[json.") && end != message.npos) {
      message = message.substr(end + 2);
    }
    return false;
  }
};

std::string syntax_error(std::string_view text) {
  SyntaxError handler;
  json::sax_parse(text, &handler, json::input_format_t::json, true, false);
  return handler.message.empty() ? "syntax error" : handler.message;
}

// The object to read sizes from: the config itself or, for multimodal gemma3, its text_config.
struct Source {
  const json* object = nullptr;
  std::string prefix = "config.";
  const json* defaults = nullptr;
};

std::optional<Error> text_source(const json& root, Family family, std::string_view type,
                                 Source& source) {
  source.object = &root;
  if (family != Family::kGemma3 || type != "gemma3") return std::nullopt;
  auto it = root.find("text_config");
  if (it == root.end() || !it->is_object()) {
    return Error{"config.text_config", it == root.end() ? "missing" : show(*it),
                 "an object with the text model's sizes", "gemma3 is multimodal"};
  }
  source.object = &*it;
  source.prefix = "config.text_config.";
  source.defaults = &gemma3_text_defaults();
  return std::nullopt;
}

// Everything but the per-layer vectors, which are only built once the sizes are known sane.
void read_scalars(Fields& f, Family family, const json& root, ModelConfig& m) {
  if (family == Family::kGpt2) {
    read_gpt2(f, m);
  } else {
    read_standard_sizes(f, m);
  }
  bool tie_default = ties_by_default(family);
  // Multimodal gemma3 may state the tie at the top level instead of in text_config.
  if (auto top = root.find("tie_word_embeddings"); top != root.end() && top->is_boolean()) {
    tie_default = top->get<bool>();
  }
  m.tied_embeddings = f.boolean("tie_word_embeddings", tie_default);
  read_family_features(f, family, m);
  read_moe(f, family, m);
  m.mtp_layers = f.integer_or("num_nextn_predict_layers", 0, 0);
}

void read_layers(Fields& f, Family family, ModelConfig& m) {
  m.moe_layers = moe_layer_flags(f, family, m);
  read_attention_layout(f, family, m);
}

std::optional<Error> validate_sizes(const ModelConfig& model);

// Validation errors name ModelConfig members; a config file's user knows its JSON keys.
std::optional<Error> validated(const Fields& f, std::optional<Error> error) {
  if (error) error->field = json_field(f, error->field);
  return error;
}

// The checkpoint's storage: quantization_config and torch_dtype, from the top level or (gemma3)
// the text config. Kept as text; their readers (quantization.h) check them.
void read_checkpoint_format(const json& root, const json& text, ParsedModel& parsed) {
  for (const json* object : {&root, &text}) {
    auto qc = object->find("quantization_config");
    if (qc != object->end() && !qc->is_null() && parsed.quantization_config.empty())
      parsed.quantization_config = qc->dump();
    for (const char* key : {"torch_dtype", "dtype"}) {
      auto dtype = object->find(key);
      if (dtype != object->end() && dtype->is_string() && parsed.torch_dtype.empty())
        parsed.torch_dtype = dtype->get<std::string>();
    }
  }
}

Result<ParsedModel> parse_object(const json& root, std::string_view name) {
  ParsedModel parsed;
  ModelConfig& m = parsed.model;
  m.name = std::string(name);
  auto type = root.find("model_type");
  if (type != root.end() && !type->is_string()) {
    return Error{"config.model_type", show(*type), "a model_type string such as \"llama\"", ""};
  }
  m.model_type = type == root.end() ? "" : type->get<std::string>();
  Family family = family_of(m.model_type);
  if (family == Family::kUnknown) {
    parsed.warnings.push_back(
        (m.model_type.empty() ? std::string("config has no model_type")
                              : "model_type \"" + m.model_type + "\" is not known to vramplan") +
        "; read best-effort as a Llama-style decoder (gated MLP, RMSNorm, untied unless stated)");
  }
  Source source;
  if (auto error = text_source(root, family, m.model_type, source)) return *error;
  Fields f(*source.object, source.prefix, source.defaults);
  read_scalars(f, family, root, m);
  if (f.error()) return *f.error();
  // Checked before anything is sized by num_layers: a config claiming 10^12 layers must fail,
  // not allocate.
  if (auto error = validated(f, validate_sizes(m))) return *error;
  read_layers(f, family, m);
  if (f.error()) return *f.error();
  if (auto error = validated(f, validate_model(m))) return *error;
  read_checkpoint_format(root, *source.object, parsed);
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// Validation.

// Bounds that keep every memory product far from 2^63 (see check_total_size).
constexpr int64_t kMaxHidden = 1 << 20;
constexpr int64_t kMaxLayers = 100'000;
constexpr int64_t kMaxHeads = 1 << 16;
constexpr int64_t kMaxHeadDim = 1 << 16;
constexpr int64_t kMaxFfn = 1 << 24;
constexpr int64_t kMaxVocab = 100'000'000;
constexpr int64_t kMaxPositions = int64_t{1} << 30;
constexpr int64_t kMaxExperts = 1'000'000;
constexpr int64_t kMaxNorms = 16;
constexpr int64_t kMaxMtp = 1'000;
// At most 2^50 (~1.1e15) parameters: with ~20 bytes of training state per parameter and the
// further products downstream (bytes, shards, bucket sizes) everything stays below 2^60.
constexpr long double kMaxParams = 0x1p50L;

std::optional<Error> check_range(const std::string& field, int64_t value, int64_t min,
                                 int64_t max) {
  if (value >= min && value <= max) return std::nullopt;
  std::string accepted = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  std::string reason = value < min ? (min == 1 ? "must be positive" : "must not be negative")
                                   : "too large: memory byte counts would overflow 64 bits";
  return Error{field, std::to_string(value), accepted, reason};
}

std::optional<Error> first_error(std::initializer_list<std::optional<Error>> checks) {
  for (const std::optional<Error>& check : checks) {
    if (check) return check;
  }
  return std::nullopt;
}

bool any_dense_layer(const ModelConfig& m) {
  return std::find(m.moe_layers.begin(), m.moe_layers.end(), false) != m.moe_layers.end();
}

std::optional<Error> check_sizes(const ModelConfig& m) {
  // A model whose every layer is MoE needs no dense width.
  int64_t min_ffn = m.is_moe() && !any_dense_layer(m) ? 0 : 1;
  return first_error({
      check_range("hidden", m.hidden, 1, kMaxHidden),
      check_range("num_layers", m.num_layers, 1, kMaxLayers),
      check_range("num_heads", m.num_heads, 1, kMaxHeads),
      check_range("num_kv_heads", m.num_kv_heads, 1, m.num_heads),
      check_range("head_dim", m.head_dim, 1, kMaxHeadDim),
      check_range("ffn", m.ffn, min_ffn, kMaxFfn),
      check_range("vocab", m.vocab, 1, kMaxVocab),
      check_range("max_position_embeddings", m.max_position_embeddings,
                  m.learned_position_embeddings ? 1 : 0, kMaxPositions),
      check_range("norms_per_layer", m.norms_per_layer, 0, kMaxNorms),
      check_range("mtp_layers", m.mtp_layers, 0, kMaxMtp),
  });
}

std::optional<Error> check_heads(const ModelConfig& m) {
  if (m.num_heads % m.num_kv_heads == 0) return std::nullopt;
  return Error{"num_kv_heads", std::to_string(m.num_kv_heads),
               "a divisor of num_heads (" + std::to_string(m.num_heads) + ")",
               std::to_string(m.num_heads) + " attention heads cannot be grouped evenly"};
}

std::optional<Error> check_moe(const ModelConfig& m) {
  const MoeConfig& moe = m.moe;
  if (auto error = check_range("moe.num_experts", moe.num_experts, 0, kMaxExperts)) return error;
  if (!m.is_moe()) return std::nullopt;
  if (moe.top_k > moe.num_experts) {
    return Error{"moe.top_k", std::to_string(moe.top_k), "1 to " + std::to_string(moe.num_experts),
                 "more experts per token than the " + std::to_string(moe.num_experts) + " experts"};
  }
  return first_error({
      check_range("moe.top_k", moe.top_k, 1, moe.num_experts),
      check_range("moe.expert_ffn", moe.expert_ffn, 1, kMaxFfn),
      check_range("moe.shared_experts", moe.shared_experts, 0, kMaxExperts),
      check_range("moe.shared_expert_ffn", moe.shared_expert_ffn, moe.shared_experts > 0 ? 1 : 0,
                  kMaxFfn),
  });
}

std::optional<Error> check_mla(const ModelConfig& m) {
  if (m.attention != AttentionKind::kMla) return std::nullopt;
  const MlaConfig& mla = m.mla;
  auto error = first_error({
      check_range("mla.q_lora_rank", mla.q_lora_rank, 0, kMaxHidden),
      check_range("mla.kv_lora_rank", mla.kv_lora_rank, 1, kMaxHidden),
      check_range("mla.qk_nope_head_dim", mla.qk_nope_head_dim, 0, kMaxHeadDim),
      check_range("mla.qk_rope_head_dim", mla.qk_rope_head_dim, 0, kMaxHeadDim),
      check_range("mla.v_head_dim", mla.v_head_dim, 1, kMaxHeadDim),
  });
  if (error || mla.qk_nope_head_dim + mla.qk_rope_head_dim > 0) return error;
  return Error{"mla.qk_nope_head_dim", "0", "a positive qk_nope_head_dim + qk_rope_head_dim",
               "queries and keys would have no width"};
}

std::optional<Error> check_layers(const ModelConfig& m) {
  auto count = static_cast<size_t>(m.num_layers);
  std::string accepted = "one entry per layer (" + std::to_string(m.num_layers) + ")";
  if (m.moe_layers.size() != count) {
    return Error{"moe_layers", std::to_string(m.moe_layers.size()) + " entries", accepted, ""};
  }
  if (m.layer_attention.size() != count) {
    return Error{"layer_attention", std::to_string(m.layer_attention.size()) + " entries", accepted,
                 ""};
  }
  if (!m.is_moe() &&
      std::find(m.moe_layers.begin(), m.moe_layers.end(), true) != m.moe_layers.end()) {
    return Error{"moe_layers", "MoE layers", "no MoE layers when moe.num_experts is 0", ""};
  }
  bool sliding = std::find(m.layer_attention.begin(), m.layer_attention.end(),
                           LayerAttention::kSliding) != m.layer_attention.end();
  return check_range("sliding_window", m.sliding_window, sliding ? 1 : 0, kMaxPositions);
}

// A generous upper estimate of the parameter count in long double, computed before anything
// multiplies sizes in int64, so that absurd combinations are refused instead of overflowing.
long double approx_params(const ModelConfig& m) {
  long double h = m.hidden, d = m.head_dim, a = m.num_heads, g = m.num_kv_heads;
  long double ranks = m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim;
  long double widths = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim;
  long double attention =
      2 * h * (a + g) * d + (h + a * widths) * (ranks + 1) + a * widths * h + 4 * (h + a * d);
  long double mlp = 3 * (h + 1) * (m.ffn + 1);
  long double experts = (m.moe.num_experts + m.moe.shared_experts) * 3 * (h + 1) *
                        (m.moe.expert_ffn + m.moe.shared_expert_ffn + 1);
  long double layer = attention + mlp + experts + m.moe.num_experts * (h + 2) + 40 * h;
  long double layers = static_cast<long double>(m.num_layers) + m.mtp_layers;
  return layers * (layer + 2 * h * h) + (2.0L * m.vocab + m.max_position_embeddings + 4) * h;
}

std::optional<Error> check_total_size(const ModelConfig& m) {
  long double params = approx_params(m);
  if (params <= kMaxParams) return std::nullopt;
  char estimate[32];
  std::snprintf(estimate, sizeof estimate, "about %.3g parameters", static_cast<double>(params));
  return Error{"model", estimate, "at most about 1.1e15 (2^50) parameters",
               "the sizes together are too large: memory byte counts would overflow 64 bits"};
}

// Everything but the per-layer vectors. MLA first: its widths make up head_dim.
std::optional<Error> validate_sizes(const ModelConfig& model) {
  if (auto error = check_mla(model)) return error;
  if (auto error = check_sizes(model)) return error;
  if (auto error = check_heads(model)) return error;
  if (auto error = check_moe(model)) return error;
  return check_total_size(model);
}

}  // namespace

Result<ParsedModel> parse_hf_config(std::string_view json_text, std::string_view name) {
  try {
    json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded()) {
      return not_json(json_text, name, "not valid JSON: " + syntax_error(json_text));
    }
    if (!root.is_object()) {
      return not_json(show(root), "",
                      "not a JSON object (found " + std::string(root.type_name()) + ")");
    }
    return parse_object(root, name);
  } catch (const std::exception& e) {
    // nlohmann throws type_error and friends on unexpected shapes; none may cross the API.
    return Error{"config", std::string(name), "a Hugging Face config.json object",
                 std::string("could not be read: ") + e.what()};
  }
}

std::optional<Error> validate_model(const ModelConfig& model) {
  if (auto error = validate_sizes(model)) return error;
  return check_layers(model);
}

}  // namespace vramplan
