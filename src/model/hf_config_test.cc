#include "vramplan/model/hf_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vramplan/model/presets.h"

namespace vramplan {
namespace {

ModelConfig preset_model(const std::string& name) {
  const Preset* preset = find_preset(name);
  EXPECT_NE(preset, nullptr) << name;
  if (preset == nullptr) return {};
  Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
  EXPECT_TRUE(parsed.ok()) << name << ": " << (parsed.ok() ? "" : parsed.error().message());
  return parsed.ok() ? parsed->model : ModelConfig{};
}

Error parse_error(const std::string& json) {
  Result<ParsedModel> parsed = parse_hf_config(json, "test.json");
  EXPECT_FALSE(parsed.ok()) << json;
  return parsed.ok() ? Error{} : parsed.error();
}

int count_sliding(const ModelConfig& model) {
  int sliding = 0;
  for (LayerAttention kind : model.layer_attention) sliding += kind == LayerAttention::kSliding;
  return sliding;
}

// A small config of `type` with `extra` keys appended. nlohmann::json keeps the last of
// duplicate keys, so `extra` may also override the standard ones.
std::string config_with(const std::string& type, const std::string& extra) {
  return R"({"model_type": ")" + type + R"(", "hidden_size": 64, "num_hidden_layers": 2,
             "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100)" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

std::string llama_with(const std::string& extra) { return config_with("llama", extra); }

TEST(HfConfigTest, EveryPresetParsesWithoutWarnings) {
  for (const Preset& preset : presets()) {
    Result<ParsedModel> parsed = parse_hf_config(preset.config, preset.name);
    ASSERT_TRUE(parsed.ok()) << preset.name << ": " << parsed.error().message();
    EXPECT_TRUE(parsed->warnings.empty()) << preset.name;
    EXPECT_EQ(parsed->model.name, preset.name);
    EXPECT_EQ(validate_model(parsed->model), std::nullopt) << preset.name;
  }
}

TEST(HfConfigTest, Llama31_8B) {
  ModelConfig m = preset_model("Llama-3.1-8B");
  EXPECT_EQ(m.model_type, "llama");
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.num_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.ffn, 14336);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.max_position_embeddings, 131072);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.mlp, MlpKind::kGated);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.norms_per_layer, 2);
  EXPECT_FALSE(m.qkv_bias || m.attn_out_bias || m.mlp_bias || m.qk_norm);
  EXPECT_FALSE(m.is_moe());
  EXPECT_EQ(m.moe_layers, std::vector<bool>(32, false));
  EXPECT_EQ(count_sliding(m), 0);
  EXPECT_EQ(m.sliding_window, 0);
  EXPECT_EQ(m.mtp_layers, 0);
}

TEST(HfConfigTest, DefaultsWhenKeysAbsentOrNull) {
  ModelConfig m = preset_model("Llama-2-7b");  // no head_dim key
  EXPECT_EQ(m.head_dim, 4096 / 32);
  Result<ParsedModel> parsed =
      parse_hf_config(llama_with(R"("head_dim": null, "num_key_value_heads": null)"), "x");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->model.head_dim, 16);
  EXPECT_EQ(parsed->model.num_kv_heads, 4);
  EXPECT_FALSE(parsed->model.tied_embeddings);  // LlamaConfig default
}

TEST(HfConfigTest, HeadDimFromConfigWins) {
  ModelConfig m = preset_model("gemma-2-27b");  // 4608 / 32 = 144, but head_dim is 128
  EXPECT_EQ(m.head_dim, 128);
}

TEST(HfConfigTest, TiedByFamilyDefault) {
  EXPECT_TRUE(preset_model("gemma-2-9b").tied_embeddings);  // key absent: Gemma ties
  EXPECT_TRUE(preset_model("gpt2").tied_embeddings);
  EXPECT_TRUE(preset_model("Llama-3.2-1B").tied_embeddings);  // stated in the file
  EXPECT_FALSE(preset_model("OLMo-2-1124-7B").tied_embeddings);
}

TEST(HfConfigTest, Gpt2) {
  ModelConfig m = preset_model("gpt2");
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.num_layers, 12);
  EXPECT_EQ(m.num_heads, 12);
  EXPECT_EQ(m.num_kv_heads, 12);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.ffn, 4 * 768);  // n_inner absent
  EXPECT_EQ(m.max_position_embeddings, 1024);
  EXPECT_EQ(m.mlp, MlpKind::kPlain);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_TRUE(m.learned_position_embeddings);
  EXPECT_TRUE(m.qkv_bias && m.attn_out_bias && m.mlp_bias);
}

TEST(HfConfigTest, Qwen2HasQkvBiasAndNoSliding) {
  ModelConfig m = preset_model("Qwen2.5-7B");  // sliding_window set, use_sliding_window false
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.attn_out_bias);
  EXPECT_EQ(count_sliding(m), 0);
  EXPECT_EQ(m.sliding_window, 0);
}

TEST(HfConfigTest, QwenSlidingAboveMaxWindowLayers) {
  std::string json = R"({"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 4,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
      "use_sliding_window": true, "sliding_window": 256, "max_window_layers": 3})";
  Result<ParsedModel> parsed = parse_hf_config(json, "x");
  ASSERT_TRUE(parsed.ok());
  std::vector<LayerAttention> expected(3, LayerAttention::kFull);
  expected.push_back(LayerAttention::kSliding);
  EXPECT_EQ(parsed->model.layer_attention, expected);
  EXPECT_EQ(parsed->model.sliding_window, 256);
}

TEST(HfConfigTest, MistralSlidingWindow) {
  ModelConfig v01 = preset_model("Mistral-7B-v0.1");
  EXPECT_EQ(count_sliding(v01), 32);
  EXPECT_EQ(v01.sliding_window, 4096);
  ModelConfig v03 = preset_model("Mistral-7B-v0.3");  // "sliding_window": null
  EXPECT_EQ(count_sliding(v03), 0);
  EXPECT_EQ(v03.sliding_window, 0);
}

TEST(HfConfigTest, Gemma2AlternatesStartingWithSliding) {
  ModelConfig m = preset_model("gemma-2-9b");
  EXPECT_EQ(m.norms_per_layer, 4);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_EQ(m.sliding_window, 4096);
  ASSERT_EQ(m.layer_attention.size(), 42u);
  for (size_t i = 0; i < m.layer_attention.size(); ++i) {
    EXPECT_EQ(m.layer_attention[i], i % 2 == 0 ? LayerAttention::kSliding : LayerAttention::kFull);
  }
}

TEST(HfConfigTest, Gemma3MultimodalReadsTextConfigWithDefaults) {
  ModelConfig m = preset_model("gemma-3-27b");
  EXPECT_EQ(m.model_type, "gemma3");
  EXPECT_EQ(m.hidden, 5376);
  EXPECT_EQ(m.num_layers, 62);
  EXPECT_EQ(m.num_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 16);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.ffn, 21504);
  EXPECT_EQ(m.vocab, 262208);                    // Gemma3TextConfig default
  EXPECT_EQ(m.max_position_embeddings, 131072);  // Gemma3TextConfig default
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.qk_norm);
  EXPECT_EQ(m.norms_per_layer, 4);
  EXPECT_EQ(m.sliding_window, 1024);
  // sliding_window_pattern 6: layers 5, 11, ... are full.
  ASSERT_EQ(m.layer_attention.size(), 62u);
  for (size_t i = 0; i < m.layer_attention.size(); ++i) {
    EXPECT_EQ(m.layer_attention[i],
              (i + 1) % 6 == 0 ? LayerAttention::kFull : LayerAttention::kSliding);
  }
}

TEST(HfConfigTest, Gemma3TextModel) {
  ModelConfig m = preset_model("gemma-3-1b-it");
  EXPECT_EQ(m.model_type, "gemma3_text");
  EXPECT_EQ(m.vocab, 262144);
  EXPECT_EQ(m.num_kv_heads, 1);
  EXPECT_EQ(count_sliding(m), 22);
  EXPECT_EQ(m.sliding_window, 512);
}

TEST(HfConfigTest, Gemma3WithoutTextConfigIsAnError) {
  Error error = parse_error(R"({"model_type": "gemma3", "vision_config": {}})");
  EXPECT_EQ(error.field, "config.text_config");
  EXPECT_EQ(error.value, "missing");
}

TEST(HfConfigTest, Gemma3TextConfigErrorsNameTheNestedField) {
  Error error = parse_error(R"({"model_type": "gemma3", "text_config": {"hidden_size": -1}})");
  EXPECT_EQ(error.field, "config.text_config.hidden_size");
  EXPECT_EQ(error.value, "-1");
}

TEST(HfConfigTest, Olmo2FullWidthQkNorm) {
  ModelConfig m = preset_model("OLMo-2-1124-7B");
  EXPECT_TRUE(m.qk_norm_full_width);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_EQ(m.norms_per_layer, 2);
}

TEST(HfConfigTest, Phi3) {
  ModelConfig m = preset_model("Phi-3-mini-4k-instruct");
  EXPECT_EQ(m.head_dim, 96);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_EQ(m.sliding_window, 2047);
}

TEST(HfConfigTest, Mixtral) {
  ModelConfig m = preset_model("Mixtral-8x7B-v0.1");
  EXPECT_EQ(m.moe.num_experts, 8);
  EXPECT_EQ(m.moe.top_k, 2);
  EXPECT_EQ(m.moe.expert_ffn, 14336);  // intermediate_size
  EXPECT_EQ(m.moe.shared_experts, 0);
  EXPECT_FALSE(m.moe.router_bias || m.moe.expert_bias || m.moe.router_correction_bias);
  EXPECT_EQ(m.moe_layers, std::vector<bool>(32, true));
}

TEST(HfConfigTest, Qwen3Moe) {
  ModelConfig m = preset_model("Qwen3-30B-A3B");
  EXPECT_EQ(m.moe.num_experts, 128);
  EXPECT_EQ(m.moe.top_k, 8);
  EXPECT_EQ(m.moe.expert_ffn, 768);
  EXPECT_EQ(m.ffn, 6144);
  EXPECT_TRUE(m.qk_norm);
  EXPECT_EQ(m.moe_layers, std::vector<bool>(48, true));
}

TEST(HfConfigTest, Qwen3MoeSparseStepAndMlpOnlyLayers) {
  std::string json = R"({"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 6,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
      "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
      "decoder_sparse_step": 2, "mlp_only_layers": [3]})";
  Result<ParsedModel> parsed = parse_hf_config(json, "x");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  // (i + 1) % 2 == 0 -> layers 1, 3, 5; layer 3 forced dense.
  EXPECT_EQ(parsed->model.moe_layers, (std::vector<bool>{false, true, false, false, false, true}));
}

TEST(HfConfigTest, DeepseekV3) {
  ModelConfig m = preset_model("DeepSeek-V3");
  EXPECT_EQ(m.attention, AttentionKind::kMla);
  EXPECT_EQ(m.mla.q_lora_rank, 1536);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.qk_nope_head_dim, 128);
  EXPECT_EQ(m.mla.qk_rope_head_dim, 64);
  EXPECT_EQ(m.mla.v_head_dim, 128);
  EXPECT_EQ(m.head_dim, 192);
  EXPECT_EQ(m.moe.num_experts, 256);
  EXPECT_EQ(m.moe.top_k, 8);
  EXPECT_EQ(m.moe.expert_ffn, 2048);
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.moe.shared_expert_ffn, 2048);
  EXPECT_TRUE(m.moe.router_correction_bias);
  // Group-limited routing: 8 groups, 4 per token (n_group, topk_group).
  EXPECT_EQ(m.moe.router_groups, 8);
  EXPECT_EQ(m.moe.router_group_top_k, 4);
  EXPECT_EQ(m.mtp_layers, 1);
  ASSERT_EQ(m.moe_layers.size(), 61u);
  for (size_t i = 0; i < 61; ++i) EXPECT_EQ(m.moe_layers[i], i >= 3) << i;
}

TEST(HfConfigTest, DeepseekV2LiteQLoraNull) {
  ModelConfig m = preset_model("DeepSeek-V2-Lite");
  EXPECT_EQ(m.mla.q_lora_rank, 0);
  EXPECT_EQ(m.moe.shared_experts, 2);
  EXPECT_FALSE(m.moe.router_correction_bias);  // greedy routing has no correction bias
  EXPECT_EQ(m.moe.router_groups, 0);           // nor groups (n_group 1)
  EXPECT_FALSE(m.moe_layers[0]);
  EXPECT_TRUE(m.moe_layers[1]);
}

TEST(HfConfigTest, GptOss) {
  ModelConfig m = preset_model("gpt-oss-20b");
  EXPECT_TRUE(m.attention_sinks);
  EXPECT_TRUE(m.qkv_bias && m.attn_out_bias);
  EXPECT_TRUE(m.moe.router_bias && m.moe.expert_bias);
  EXPECT_EQ(m.moe.num_experts, 32);
  EXPECT_EQ(m.moe.top_k, 4);
  EXPECT_EQ(m.moe.expert_ffn, 2880);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.sliding_window, 128);
  EXPECT_EQ(m.layer_attention[0], LayerAttention::kSliding);  // from layer_types
  EXPECT_EQ(m.layer_attention[1], LayerAttention::kFull);
  EXPECT_EQ(count_sliding(m), 12);
}

TEST(HfConfigTest, ExpertsPerTokenAlias) {
  std::string json = llama_with(R"("num_local_experts": 4, "experts_per_token": 2)");
  Result<ParsedModel> parsed = parse_hf_config(json, "x");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->model.moe.top_k, 2);
}

TEST(HfConfigTest, IntegralFloatsAreAccepted) {
  Result<ParsedModel> parsed = parse_hf_config(llama_with(R"("head_dim": 32.0)"), "x");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->model.head_dim, 32);
}

// ---- Errors -----------------------------------------------------------------------------------

TEST(HfConfigErrorTest, MissingHiddenSize) {
  Error error = parse_error(R"({"model_type": "llama", "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})");
  EXPECT_EQ(error.field, "config.hidden_size");
  EXPECT_EQ(error.value, "missing");
  EXPECT_EQ(error.accepted, "a positive integer");
  EXPECT_NE(error.message().find("config.hidden_size"), std::string::npos);
}

TEST(HfConfigErrorTest, NullRequiredField) {
  Error error = parse_error(llama_with(R"("hidden_size": null)"));
  EXPECT_EQ(error.field, "config.hidden_size");
  EXPECT_EQ(error.value, "null");
}

TEST(HfConfigErrorTest, NegativeAndZeroSizes) {
  Error negative = parse_error(R"({"model_type": "llama", "hidden_size": -4096,
      "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
      "vocab_size": 100})");
  EXPECT_EQ(negative.field, "config.hidden_size");
  EXPECT_EQ(negative.value, "-4096");
  EXPECT_EQ(negative.accepted, "a positive integer");
  Error zero = parse_error(R"({"model_type": "llama", "hidden_size": 64,
      "num_hidden_layers": 0, "num_attention_heads": 4, "intermediate_size": 128,
      "vocab_size": 100})");
  EXPECT_EQ(zero.field, "config.num_hidden_layers");
  EXPECT_EQ(zero.value, "0");
}

TEST(HfConfigErrorTest, StringWhereNumberExpected) {
  Error error = parse_error(R"({"model_type": "llama", "hidden_size": "4096",
      "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
      "vocab_size": 100})");
  EXPECT_EQ(error.field, "config.hidden_size");
  EXPECT_EQ(error.value, "\"4096\"");
  EXPECT_EQ(error.accepted, "a positive integer");
}

TEST(HfConfigErrorTest, FractionalAndHugeNumbers) {
  EXPECT_EQ(parse_error(llama_with(R"("head_dim": 32.5)")).field, "config.head_dim");
  EXPECT_EQ(parse_error(llama_with(R"("head_dim": 18446744073709551615)")).field,
            "config.head_dim");
  EXPECT_EQ(parse_error(llama_with(R"("head_dim": 1e300)")).field, "config.head_dim");
}

TEST(HfConfigErrorTest, WrongTypeForBoolean) {
  Error error = parse_error(llama_with(R"("tie_word_embeddings": "yes")"));
  EXPECT_EQ(error.field, "config.tie_word_embeddings");
  EXPECT_EQ(error.accepted, "true or false");
}

TEST(HfConfigErrorTest, TruncatedJson) {
  const Preset* preset = find_preset("Llama-3.1-8B");
  ASSERT_NE(preset, nullptr);
  std::string_view half = preset->config.substr(0, preset->config.size() / 2);
  Result<ParsedModel> parsed = parse_hf_config(half, "Llama-3.1-8B.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().field, "config");
  EXPECT_EQ(parsed.error().value, "Llama-3.1-8B.json");
  EXPECT_EQ(parsed.error().accepted, "a Hugging Face config.json object");
  EXPECT_EQ(parsed.error().reason.rfind("not valid JSON: ", 0), 0u) << parsed.error().reason;
  EXPECT_NE(parsed.error().reason.find("line"), std::string::npos) << parsed.error().reason;
}

TEST(HfConfigErrorTest, MalformedWithoutNameQuotesTheText) {
  Result<ParsedModel> parsed = parse_hf_config("{\"hidden_size\": 40,, }", "");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().value, "{\"hidden_size\": 40,, }");
  EXPECT_FALSE(parse_hf_config("", "").ok());
}

TEST(HfConfigErrorTest, EveryTruncationIsAnErrorNotACrash) {
  for (const Preset& preset : presets()) {
    size_t end = preset.config.rfind('}');
    for (size_t size = 0; size < end; size += 7) {
      EXPECT_FALSE(parse_hf_config(preset.config.substr(0, size), preset.name).ok())
          << preset.name << " cut at " << size;
    }
  }
}

TEST(HfConfigErrorTest, NonObjectJson) {
  for (const char* text : {"[1, 2, 3]", "42", "\"llama\"", "null", "true"}) {
    Error error = parse_error(text);
    EXPECT_EQ(error.field, "config") << text;
    EXPECT_EQ(error.accepted, "a Hugging Face config.json object");
    EXPECT_NE(error.reason.find("not a JSON object"), std::string::npos) << error.reason;
  }
}

TEST(HfConfigErrorTest, TopKAboveExperts) {
  Error error = parse_error(llama_with(R"("num_local_experts": 8, "num_experts_per_tok": 9)"));
  EXPECT_EQ(error.field, "config.num_experts_per_tok");
  EXPECT_EQ(error.value, "9");
  EXPECT_EQ(error.accepted, "1 to 8");
}

TEST(HfConfigErrorTest, MoeNeedsTopK) {
  Error error = parse_error(llama_with(R"("num_local_experts": 8)"));
  EXPECT_EQ(error.field, "config.num_experts_per_tok");
  EXPECT_EQ(error.value, "missing");
}

TEST(HfConfigErrorTest, KvHeadsMustDivideHeads) {
  Error error = parse_error(llama_with(R"("num_key_value_heads": 3)"));
  EXPECT_EQ(error.field, "config.num_key_value_heads");
  EXPECT_EQ(error.value, "3");
}

TEST(HfConfigErrorTest, LayerTypesMustMatchLayers) {
  EXPECT_EQ(parse_error(llama_with(R"("layer_types": ["full_attention"])")).field,
            "config.layer_types");
  EXPECT_EQ(parse_error(llama_with(R"("layer_types": ["full_attention", "chunked"])")).field,
            "config.layer_types");
  // Sliding layers need a window.
  EXPECT_EQ(
      parse_error(llama_with(R"("layer_types": ["full_attention", "sliding_attention"])")).field,
      "config.sliding_window");
}

TEST(HfConfigErrorTest, BadMlpOnlyLayers) {
  std::string base = R"({"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
      "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, )";
  EXPECT_EQ(parse_error(base + R"("mlp_only_layers": [5]})").field, "config.mlp_only_layers");
  EXPECT_EQ(parse_error(base + R"("mlp_only_layers": 1})").field, "config.mlp_only_layers");
}

TEST(HfConfigErrorTest, AbsurdHiddenSize) {
  Error error = parse_error(llama_with(R"("hidden_size": 1e12)"));
  EXPECT_EQ(error.field, "config.hidden_size");
  EXPECT_EQ(error.value, "1000000000000");
  EXPECT_NE(error.reason.find("overflow"), std::string::npos) << error.reason;
}

TEST(HfConfigErrorTest, AbsurdSizesFailBeforeAnythingIsAllocated) {
  // 10^12 layers would be 10^12 per-layer entries if the vectors were built first.
  Error layers = parse_error(llama_with(R"("num_hidden_layers": 1000000000000)"));
  EXPECT_EQ(layers.field, "config.num_hidden_layers");
  Error gpt2 = parse_error(R"({"model_type": "gpt2", "n_embd": 9223372036854775807,
      "n_layer": 2, "n_head": 4, "vocab_size": 100})");
  EXPECT_EQ(gpt2.field, "config.n_embd");
  Error mla = parse_error(R"({"model_type": "deepseek_v3", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
      "vocab_size": 100, "kv_lora_rank": 8, "qk_nope_head_dim": 9223372036854775807,
      "qk_rope_head_dim": 9223372036854775807, "v_head_dim": 4})");
  EXPECT_EQ(mla.field, "config.qk_nope_head_dim");
  // Each size within bounds, together far too large: reported on the config as a whole.
  Error total = parse_error(llama_with(
      R"("hidden_size": 1048576, "num_hidden_layers": 100000, "num_attention_heads": 64,
          "intermediate_size": 16777216)"));
  EXPECT_EQ(total.field, "config") << total.message();
  EXPECT_NE(total.reason.find("overflow"), std::string::npos);
}

TEST(HfConfigErrorTest, ModelTypeMustBeAString) {
  EXPECT_EQ(parse_error(R"({"model_type": 3})").field, "config.model_type");
}

TEST(HfConfigWarningTest, UnknownModelTypeIsReadLikeLlama) {
  Result<ParsedModel> parsed = parse_hf_config(config_with("falcon9", ""), "x");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  ASSERT_EQ(parsed->warnings.size(), 1u);
  EXPECT_NE(parsed->warnings[0].find("falcon9"), std::string::npos);
  EXPECT_EQ(parsed->model.model_type, "falcon9");
  EXPECT_EQ(parsed->model.hidden, 64);
  EXPECT_EQ(parsed->model.mlp, MlpKind::kGated);
}

TEST(HfConfigWarningTest, MissingModelTypeWarns) {
  std::string json = R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100})";
  Result<ParsedModel> parsed = parse_hf_config(json, "x");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->warnings.size(), 1u);
}

// ---- validate_model ----------------------------------------------------------------------------

ModelConfig valid_model() { return preset_model("Llama-3.1-8B"); }

TEST(ValidateModelTest, AcceptsPresets) { EXPECT_EQ(validate_model(valid_model()), std::nullopt); }

TEST(ValidateModelTest, RejectsAbsurdHidden) {
  ModelConfig m = valid_model();
  m.hidden = 1'000'000'000'000;
  std::optional<Error> error = validate_model(m);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->field, "hidden");
  EXPECT_EQ(error->value, "1000000000000");
  EXPECT_EQ(error->accepted, "an integer from 1 to 1048576");
  EXPECT_NE(error->message().find("overflow"), std::string::npos) << error->message();
}

TEST(ValidateModelTest, RejectsSizesThatOverflowTogether) {
  // Each size is within its own bound, but a million experts of width 2^24 at h = 2^20 is ~1e20.
  ModelConfig m = preset_model("Mixtral-8x7B-v0.1");
  m.hidden = 1 << 20;
  m.moe.num_experts = 1'000'000;
  m.moe.expert_ffn = 1 << 24;
  std::optional<Error> error = validate_model(m);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->field, "model");
  EXPECT_NE(error->reason.find("overflow"), std::string::npos);
}

TEST(ValidateModelTest, RejectsNonPositiveSizes) {
  ModelConfig m = valid_model();
  m.vocab = 0;
  ASSERT_TRUE(validate_model(m).has_value());
  EXPECT_EQ(validate_model(m)->field, "vocab");
  m = valid_model();
  m.num_layers = -1;
  EXPECT_EQ(validate_model(m)->field, "num_layers");
}

TEST(ValidateModelTest, RejectsVectorsOfTheWrongSize) {
  ModelConfig m = valid_model();
  m.moe_layers.pop_back();
  EXPECT_EQ(validate_model(m)->field, "moe_layers");
  m = valid_model();
  m.layer_attention.clear();
  EXPECT_EQ(validate_model(m)->field, "layer_attention");
  m = valid_model();
  m.moe_layers[0] = true;  // MoE layer in a dense model
  EXPECT_EQ(validate_model(m)->field, "moe_layers");
}

TEST(ValidateModelTest, RejectsTopKAboveExperts) {
  ModelConfig m = preset_model("Mixtral-8x7B-v0.1");
  m.moe.top_k = 9;
  EXPECT_EQ(validate_model(m)->field, "moe.top_k");
  m.moe.top_k = 0;
  EXPECT_EQ(validate_model(m)->field, "moe.top_k");
}

TEST(ValidateModelTest, RejectsBrokenMla) {
  ModelConfig m = preset_model("DeepSeek-V3");
  m.mla.kv_lora_rank = 0;
  EXPECT_EQ(validate_model(m)->field, "mla.kv_lora_rank");
}

TEST(ValidateModelTest, SlidingLayersNeedAWindow) {
  ModelConfig m = preset_model("gemma-2-9b");
  m.sliding_window = 0;
  EXPECT_EQ(validate_model(m)->field, "sliding_window");
}

}  // namespace
}  // namespace vramplan
