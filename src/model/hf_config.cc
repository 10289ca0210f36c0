// Reads Hugging Face config.json files into a ModelConfig, family by family, following what
// transformers instantiates for each model_type (and its defaults where a file omits a key).
#include "vramplan/model/hf_config.h"

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

#include "model/config_fields.h"
#include "model/families.h"
#include "model/family_readers.h"
#include "model/hybrid_readers.h"
#include "model/megatron_config.h"
#include "model/model_limits.h"
#include "model/recent/recent_readers.h"
#include "model/vision/vision_tower.h"

namespace vramplan {
namespace {

using namespace hf;

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

// The object to read sizes from: the config itself or, for a multimodal wrapper, its
// text_config (Qwen2.5-VL's older files keep the text sizes at the top level).
struct Source {
  const json* object = nullptr;
  std::string prefix = "config.";
  const json* defaults = nullptr;
};

std::optional<Error> text_source(const json& root, Family& family, std::string_view type,
                                 Source& source) {
  source.object = &root;
  if (!is_multimodal_wrapper(type)) return std::nullopt;
  auto it = root.find("text_config");
  const bool flat = type == "qwen2_5_vl" && root.contains("hidden_size");
  if (flat) return std::nullopt;
  if (it == root.end() || !it->is_object()) {
    return Error{"config.text_config", it == root.end() ? "missing" : show(*it),
                 "an object with the text model's sizes", std::string(type) + " is multimodal"};
  }
  source.object = &*it;
  source.prefix = "config.text_config.";
  std::string text_type;
  if (auto t = it->find("model_type"); t != it->end() && t->is_string()) text_type = *t;
  family = text_family_of(type, text_type);
  if (type == "gemma3")
    source.defaults = &gemma3_text_defaults();
  else if (type == "llava_next")
    source.defaults = text_config_defaults(text_type);
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
  if (is_hybrid_family(family)) read_hybrid_features(f, family, m);
  if (is_recent_family(family)) read_recent_features(f, family, m);
  m.mtp_layers = f.integer_or("num_nextn_predict_layers", 0, 0);
}

void read_layers(Fields& f, Family family, ModelConfig& m) {
  m.moe_layers = moe_layer_flags(f, family, m);
  if (is_hybrid_family(family))
    read_hybrid_layers(f, family, m);
  else if (is_recent_family(family))
    read_recent_layers(f, family, m);
  else
    read_attention_layout(f, family, m);
}

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
  if (family == Family::kMegatron)
    read_megatron_sizes(f, m);
  else
    read_scalars(f, family, root, m);
  if (f.error()) return *f.error();
  // Checked before anything is sized by num_layers: a config claiming 10^12 layers must fail,
  // not allocate.
  if (auto error = validated(f, validate_sizes(m))) return *error;
  if (family == Family::kMegatron)
    read_megatron_layers(f, m);
  else
    read_layers(f, family, m);
  if (f.error()) return *f.error();
  if (is_multimodal_wrapper(m.model_type)) {
    Result<VisionTower> vision = read_vision_tower(root, m);
    if (!vision.ok()) return vision.error();
    m.vision_params = vision->params;
    m.vision = vision->shape;
    if (!vision->note.empty()) parsed.warnings.push_back(vision->note);
  }
  if (auto error = validated(f, validate_model(m))) return *error;
  read_checkpoint_format(root, *source.object, parsed);
  return parsed;
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

}  // namespace vramplan
