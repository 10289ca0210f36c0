#include "vramplan/training/finetune.h"

#include <gtest/gtest.h>

#include "vramplan/io/scenario_io.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"
#include "vramplan/model/quantization.h"
#include "vramplan/training/estimate.h"

namespace vramplan {
namespace {

using nlohmann::json;

ModelConfig preset_model(const char* name) {
  const Preset* p = find_preset(name);
  EXPECT_NE(p, nullptr);
  Result<ParsedModel> parsed = parse_hf_config(p->config, p->name);
  EXPECT_TRUE(parsed.ok());
  return parsed->model;
}

Scenario resolve(json settings) {
  Result<ResolvedScenario> r = resolve_scenario(settings, nullptr);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r->scenario : Scenario{};
}

Error resolve_error(json settings) {
  Result<ResolvedScenario> r = resolve_scenario(settings, nullptr);
  EXPECT_FALSE(r.ok());
  return r.ok() ? Error{} : r.error();
}

// A run of `model` cut to `layers` layers under transformers' code: 4,096 tokens, one sequence,
// weights and gradients in `dtype`.
json transformers_run(const char* model, int layers, const char* dtype = "bf16") {
  return {{"model", model},
          {"num_layers", layers},
          {"seq_len", 4096},
          {"micro_batch", 1},
          {"param_dtype", dtype},
          {"grad_dtype", dtype},
          {"model_code", "transformers"}};
}

// A copy: the Result is usually a temporary.
StageEstimate stage0(const Result<Estimate>& e) {
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  return e.ok() ? e->stages.front() : StageEstimate{};
}

int64_t row(const StageEstimate& st, const std::string& component) {
  for (const Row& r : st.rows)
    if (r.component == component) return r.bytes;
  return -1;  // absent
}

TEST(LoraParameters, PeftsLlama2Example) {
  // PEFT's r = 8 on q_proj and v_proj of Llama-2-7B: 32 layers × 2 × 8·(4096 + 4096)
  // = 4,194,304 trainable parameters. r = 16 doubles it.
  const ModelConfig m = preset_model("Llama-2-7b");
  Finetune f;
  f.method = FinetuneMethod::kLora;
  f.lora_rank = 8;
  f.lora_targets = kLoraQ | kLoraV;
  EXPECT_EQ(lora_parameters(m, f), 4'194'304);
  f.lora_rank = 16;
  EXPECT_EQ(lora_parameters(m, f), 8'388'608);
  // QLoRA's all-linear r = 64: per layer 64·(4·(4096+4096) + 2·(4096+11008) + (11008+4096))
  // = 4,997,120; × 32 = 159,907,840 (the QLoRA notebooks' "trainable params").
  f.lora_rank = 64;
  f.lora_targets = *parse_lora_targets("all-linear");
  EXPECT_EQ(lora_parameters(m, f), 159'907'840);
  // Frozen first layers carry no adapters.
  f.freeze_first_layers = 8;
  EXPECT_EQ(lora_parameters(m, f), 159'907'840 / 32 * 24);
}

TEST(LoraParameters, GqaKeyValueProjectionsAreNarrow) {
  // Llama-3.1-8B k_proj: 4096 → 1024; r·(4096 + 1024) each for k and v.
  const ModelConfig m = preset_model("Llama-3.1-8B");
  Finetune f;
  f.method = FinetuneMethod::kLora;
  f.lora_rank = 16;
  f.lora_targets = kLoraK | kLoraV;
  EXPECT_EQ(lora_parameters(m, f), 32 * 2 * 16 * (4096 + 1024));
}

// Phi-3 stores Q|K|V and gate|up as fused matrices (qkv_proj 3072 -> 9216, gate_up_proj 3072 ->
// 16384): PEFT attaches one adapter to each. all-linear, r 16, per layer:
//   qkv r·(3072 + 9216) + o r·(3072 + 3072) + gate_up r·(3072 + 16384) + down r·(8192 + 3072)
TEST(LoraParameters, FusedProjectionsGetOneAdapter) {
  const ModelConfig m = preset_model("Phi-3-mini-4k-instruct");
  Finetune f;
  f.method = FinetuneMethod::kLora;
  f.lora_rank = 16;
  f.lora_targets = kLoraQ | kLoraK | kLoraV | kLoraO | kLoraGate | kLoraUp | kLoraDown;
  const int64_t per_layer = 16 * ((3072 + 9216) + (3072 + 3072) + (3072 + 16384) + (8192 + 3072));
  EXPECT_EQ(lora_parameters(m, f), m.num_layers * per_layer);
  // Naming only q still adapts the fused Q|K|V module, as PEFT's target qkv_proj does.
  f.lora_targets = kLoraQ;
  EXPECT_EQ(lora_parameters(m, f), m.num_layers * 16 * (3072 + 9216));
}

TEST(LoraTargets, NamesGroupsAndErrors) {
  EXPECT_EQ(*parse_lora_targets("q_proj, v_proj"), kLoraQ | kLoraV);
  // torchtune's module names: output_proj, and the MLP's w1 (gate), w2 (down), w3 (up)
  EXPECT_EQ(*parse_lora_targets("q_proj,output_proj,w1,w2,w3"),
            kLoraQ | kLoraO | kLoraGate | kLoraDown | kLoraUp);
  EXPECT_EQ(*parse_lora_targets("attention"), kLoraAttention);  // MLA's projections too
  EXPECT_EQ(*parse_lora_targets("q_a_proj,q_b_proj,kv_a_proj_with_mqa,kv_b_proj"),
            kLoraQA | kLoraQB | kLoraKVA | kLoraKVB);
  EXPECT_EQ(*parse_lora_targets("MLP"), kLoraGate | kLoraUp | kLoraDown);
  EXPECT_EQ(lora_targets_text(*parse_lora_targets("down,q")), "q,down");
  Result<uint32_t> bad = parse_lora_targets("q,lm_head");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "lora_targets");
  EXPECT_NE(bad.error().reason.find("lm_head"), std::string::npos);
}

TEST(Finetune, LoraKeepsNoStateForFrozenWeights) {
  const Scenario s = resolve({{"model", "Llama-3.1-8B"}, {"finetune", "lora"}, {"lora_rank", 16}});
  const Result<Estimate> e = estimate(s);
  const StageEstimate st = stage0(e);
  const int64_t adapters = lora_parameters(s.model, s.finetune);
  EXPECT_EQ(row(st, "frozen base weights (bf16)"), 2 * 8'030'261'248);
  EXPECT_EQ(row(st, "adapter weights"), 2 * adapters);
  EXPECT_EQ(row(st, "adapter gradients"), 4 * adapters);  // fp32 accumulation buffer
  EXPECT_EQ(row(st, "adapter optimizer states"), 8 * adapters);
  EXPECT_EQ(row(st, "gradients"), -1);
  EXPECT_EQ(row(st, "optimizer states"), -1);
  // Activations for the backward through the frozen layers are all still kept.
  const StageEstimate full = stage0(estimate(resolve({{"model", "Llama-3.1-8B"}})));
  EXPECT_EQ(row(st, "activations"), row(full, "activations"));
  EXPECT_GT(row(st, "adapter activations"), 0);
}

TEST(Finetune, QloraStoresTheBaseInNf4) {
  const Scenario s = resolve({{"model", "Llama-2-7b"},
                              {"finetune", "qlora"},
                              {"lora_targets", "all-linear"},
                              {"lora_rank", 64}});
  EXPECT_EQ(s.training.optimizer, Optimizer::kAdam8bit);  // paged 8-bit AdamW by default
  const StageEstimate st = stage0(estimate(s));
  // Linear weights: 6,738,415,616 total − 2·32,000·4,096 embeddings − 65·4,096 norms.
  const int64_t linears = 6'738'415'616 - 2 * 32'000 * 4096 - 65 * 4096;
  EXPECT_EQ(row(st, "frozen base weights (nf4)"),
            quantized_bytes({WeightFormat::kNf4}, {linears, 0, 0}, false).bytes);
  EXPECT_EQ(row(st, "embeddings, norms (bf16)"), 2 * (2 * 32'000 * 4096 + 65 * 4096));
  // 8-bit AdamW: 2 B per adapter parameter plus an fp32 absmax per 2,048 for m and v.
  const int64_t p = 159'907'840;
  EXPECT_EQ(row(st, "adapter optimizer states"), 2 * p + 2 * 4 * ((p + 2047) / 2048));
  // An explicit optimizer wins.
  EXPECT_EQ(resolve({{"model", "Llama-2-7b"}, {"finetune", "qlora"}, {"optimizer", "adamw"}})
                .training.optimizer,
            Optimizer::kAdamW);
}

TEST(Finetune, FrozenFirstLayersKeepNoActivationsWhenNothingBeforeTrains) {
  const StageEstimate full = stage0(estimate(resolve({{"model", "Llama-3.1-8B"}})));
  const StageEstimate frozen = stage0(estimate(resolve(
      {{"model", "Llama-3.1-8B"}, {"freeze_embeddings", true}, {"freeze_first_layers", 8}})));
  EXPECT_EQ(row(frozen, "activations"), row(full, "activations") / 32 * 24);
  // Without a frozen embedding the backward reaches it through every layer: all are kept.
  const StageEstimate embedding_trains =
      stage0(estimate(resolve({{"model", "Llama-3.1-8B"}, {"freeze_first_layers", 8}})));
  EXPECT_EQ(row(embedding_trains, "activations"), row(full, "activations"));
  // Frozen weights stay as weights; states only for the trainable ones.
  const int64_t all = 8'030'261'248;
  EXPECT_EQ(row(frozen, "weights") + row(frozen, "frozen weights"), 2 * all);
  const int64_t trainable = row(frozen, "weights") / 2;
  EXPECT_EQ(row(frozen, "optimizer states"), 8 * trainable);
  EXPECT_LT(trainable, all * 3 / 4);
}

TEST(Finetune, InactiveSettingsChangeNothing) {
  const StageEstimate a = stage0(estimate(resolve({{"model", "Llama-3.1-8B"}})));
  const StageEstimate b =
      stage0(estimate(resolve({{"model", "Llama-3.1-8B"}, {"finetune", "none"}})));
  EXPECT_EQ(a.device_bytes, b.device_bytes);
  EXPECT_EQ(row(b, "frozen weights"), -1);
}

TEST(Finetune, BadSettingsNameTheKey) {
  EXPECT_EQ(resolve_error({{"model", "Llama-3.1-8B"}, {"lora_rank", 8}}).field, "lora_rank");
  EXPECT_EQ(resolve_error({{"model", "Llama-3.1-8B"}, {"finetune", "dora"}}).field, "finetune");
  EXPECT_EQ(
      resolve_error({{"model", "Llama-3.1-8B"}, {"finetune", "lora"}, {"lora_rank", 0}}).field,
      "lora_rank");
  EXPECT_EQ(resolve_error({{"model", "Llama-3.1-8B"}, {"freeze_first_layers", 33}}).field,
            "freeze_first_layers");
  EXPECT_EQ(
      resolve_error({{"model", "gpt2"}, {"finetune", "lora"}, {"lora_targets", "gate"}}).field,
      "lora_targets");
  EXPECT_EQ(
      resolve_error({{"model", "Llama-3.1-8B"}, {"finetune", "lora"}, {"adapter_dtype", "fp12"}})
          .field,
      "adapter_dtype");
}

TEST(LoraActivations, AFrozenBaseKeepsNoInputsForItsWeights) {
  // Llama-3.1-8B, 2 layers, 4,096 tokens, bf16 activations. PEFT freezes the base: the QKV, MLP
  // and down inputs and the norms' bf16 normalised values (2 per layer) are kept only for weight
  // gradients, 8h + 2f = 61,440 B per token and layer; the first layer's input norm, whose input
  // comes from the frozen embedding, keeps nothing (its fp32 upcast and rsqrt, 4h + 4 B). Each
  // fp32 adapter keeps its own fp32 copy of its input and r fp32 values (PEFT's
  // _cast_input_dtype). The final norm and the frozen LM head keep 4h less per token.
  json settings = transformers_run("Llama-3.1-8B", 2);
  const StageEstimate full = stage0(estimate(resolve(settings), {.explain = false}));
  settings["finetune"] = "lora";
  settings["lora_rank"] = 16;
  settings["lora_targets"] = "q,v";
  settings["adapter_dtype"] = "fp32";
  const StageEstimate lora = stage0(estimate(resolve(settings), {.explain = true}));
  const int64_t tokens = 4096, layers = 2, h = 4096;
  EXPECT_EQ(row(full, "activations") - row(lora, "activations"),
            tokens * layers * 61'440 + tokens * (4 * h + 4));
  EXPECT_EQ(row(lora, "adapter activations"), tokens * layers * 2 * (16 + h) * 4);
  EXPECT_EQ(row(full, "final norm + LM head inputs") - row(lora, "final norm + LM head inputs"),
            tokens * 4 * h);
  // Adapters in the activation dtype: no cast, lora_A keeps the base input itself (QKV input).
  settings["adapter_dtype"] = "bf16";
  const StageEstimate same = stage0(estimate(resolve(settings), {.explain = false}));
  EXPECT_EQ(row(full, "activations") - row(same, "activations"),
            tokens * layers * (61'440 - 2 * h) + tokens * (4 * h + 4));
  EXPECT_EQ(row(same, "adapter activations"), tokens * layers * 2 * 16 * 2);
}

TEST(LoraActivations, PhiThreesFusedProjectionsFollowTheSameRule) {
  // Phi-3-mini (h 3,072, f 8,192), 2 layers, 4,096 tokens, all-linear fp32 adapters. Its
  // qkv_proj and gate_up_proj are single frozen linears: per layer and token the QKV and MLP
  // bf16 inputs (2h B each), the two norms' bf16 normalised values (2h B each) and the down
  // projection's input (2f B) are not kept, 8h + 2f B as for Llama; the first layer's input norm
  // keeps nothing (4h + 4 B). Measured with transformers' modeling_phi3.py and PEFT on the
  // reference (every tensor at the peak).
  json settings = transformers_run("Phi-3-mini-4k-instruct", 2);
  const StageEstimate full = stage0(estimate(resolve(settings), {.explain = false}));
  settings["finetune"] = "lora";
  settings["lora_rank"] = 16;
  settings["lora_targets"] = "all-linear";
  settings["adapter_dtype"] = "fp32";
  const StageEstimate lora = stage0(estimate(resolve(settings), {.explain = false}));
  const int64_t tokens = 4096, layers = 2, h = 3072, f = 8192;
  EXPECT_EQ(row(full, "activations") - row(lora, "activations"),
            tokens * layers * (8 * h + 2 * f) + tokens * (4 * h + 4));
}

TEST(LoraActivations, MlaUnderAFrozenBase) {
  // DeepSeek-V2-Lite (h 2,048, dense f 10,944, kv_lora 512, 16 heads, nope 128, v 128),
  // transformers' code, 4,096 tokens, q,v adapters in fp32. Layer 0 is dense. Against full
  // training, a frozen layer keeps no bf16 down-projection input (2h B per token), no bf16
  // normalised values of its two norms (2·2h) nor of the kv latent norm (2·512), no kv_b input
  // (2·512), no MLP input (2h) and no down-projection input (2f); the first layer's input norm
  // keeps nothing (4h + 4). Read on the reference's live tensors (modeling_deepseek_v2.py, PEFT).
  json settings = transformers_run("DeepSeek-V2-Lite", 1);
  const StageEstimate full = stage0(estimate(resolve(settings), {.explain = false}));
  settings["finetune"] = "lora";
  settings["lora_rank"] = 16;
  settings["lora_targets"] = "q";
  settings["adapter_dtype"] = "fp32";
  const StageEstimate lora = stage0(estimate(resolve(settings), {.explain = false}));
  const int64_t tokens = 4096, h = 2048, f = 10944, kv = 512;
  // And the first layer's kv latent norm, whose kv_a_proj has no adapter, records nothing:
  // its fp32 upcast and rsqrt (4·512 + 4).
  EXPECT_EQ(row(full, "activations") - row(lora, "activations"),
            tokens * (2 * h + 4 * h + 2 * kv + 2 * kv + 2 * h + 2 * f) + tokens * (4 * h + 4) +
                tokens * (4 * kv + 4));
}

TEST(LoraTargets, MlaProjectionsAreMatchedByNameAsPeftDoes) {
  // PEFT matches target modules by name: q_proj, v_proj on DeepSeek-V2-Lite's MLA adapts q_proj
  // alone (there is no v_proj), and says so; kv_a, kv_b name its key/value projections.
  json settings = transformers_run("DeepSeek-V2-Lite", 2);
  settings["finetune"] = "lora";
  settings["lora_rank"] = 16;
  settings["lora_targets"] = "q_proj,v_proj";
  const Scenario qv = resolve(settings);
  settings["lora_targets"] = "q";
  const Scenario q = resolve(settings);
  EXPECT_EQ(lora_parameters(qv.model, qv.finetune), lora_parameters(q.model, q.finetune));
  EXPECT_NE(unmatched_lora_targets_note(qv).find("lora_targets v"), std::string::npos)
      << unmatched_lora_targets_note(qv);
  EXPECT_EQ(unmatched_lora_targets_note(q), "");
  const Result<Estimate> e = estimate(qv);
  ASSERT_TRUE(e.ok());
  bool noted = false;
  for (const std::string& w : e->warnings) noted = noted || w.find("lora_targets v") == 0;
  EXPECT_TRUE(noted);
  // kv_a, kv_b: 16·(2,048 + 576) + 16·(512 + 16·256) per layer beside q_proj's.
  settings["lora_targets"] = "q,kv_a,kv_b";
  const Scenario kv = resolve(settings);
  EXPECT_EQ(lora_parameters(kv.model, kv.finetune) - lora_parameters(q.model, q.finetune),
            2 * 16 * ((2048 + 576) + (512 + 16 * 256)));
  // Nothing the model has: refused, naming what it has.
  settings["lora_targets"] = "k,v";
  Result<ResolvedScenario> none = resolve_scenario(settings, nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().field, "lora_targets");
  EXPECT_NE(none.error().accepted.find("kv_a"), std::string::npos) << none.error().accepted;
}

TEST(Activations, GptOssExpertsKeepSixTensorsAndTheDownInput) {
  // transformers' GptOssExperts: gate_up output (2 f-wide), clamped gate, sigmoid, gate·σ and
  // up + 1, then the down projection's input: 7 f-wide tensors per routed token in full
  // training, 7 · 4,096·4 · 2,880 · 2 B = 630 MiB per layer; with LoRA (gpt-oss's experts take no
  // adapters) the down projection keeps no input: 6, 540 MiB.
  json settings = transformers_run("gpt-oss-20b", 1);
  auto formula = [](const StageEstimate& st) {
    for (const Row& r : st.rows)
      if (r.component == "activations") return r.formula;
    return std::string();
  };
  const StageEstimate full = stage0(estimate(resolve(settings), {.explain = true}));
  EXPECT_NE(formula(full).find("expert intermediates 7·n·k·etp·f_e/etp·B/t_sp (630.0 MiB)"),
            std::string::npos)
      << formula(full);
  settings["finetune"] = "lora";
  settings["lora_targets"] = "q,v";
  const StageEstimate lora = stage0(estimate(resolve(settings), {.explain = true}));
  EXPECT_NE(formula(lora).find("6·n·k·etp·f_e/etp·B/t_sp (frozen experts) (540.0 MiB)"),
            std::string::npos)
      << formula(lora);
}

TEST(Activations, GptOssSoftmaxUnderAutocastIsFp32) {
  // gpt-oss's eager attention concatenates the fp32 sinks to the logits: under autocast the cat
  // promotes to fp32, the softmax is kept in fp32 and the value matmul keeps a bf16 cast of the
  // probabilities without the sink column: per layer n·a·((s+1)·4 + s·2) instead of n·a·(s+1)·2.
  json settings = transformers_run("gpt-oss-20b", 2, "fp32");
  settings["activation_dtype"] = "bf16";
  settings["flash_attention"] = false;
  Scenario s = resolve(settings);
  const StageEstimate plain = stage0(estimate(s, {.explain = false}));
  s.conventions.autocast_weight_cache = true;
  const StageEstimate amp = stage0(estimate(s, {.explain = false}));
  const int64_t n = 4096, a = 64, layers = 2;
  // The experts are fp32 under autocast too (their 7 f-wide tensors and 2 h-wide, 2 B more each).
  const int64_t experts = layers * n * 4 * (7 * 2880 + 2 * 2880) * 2;
  // q, k and v cast their input each (2 copies more); gpt-oss's norms keep fp32 already.
  const int64_t norms_and_casts = layers * n * 2880 * 2 * 2;
  EXPECT_EQ(row(amp, "activations") + row(amp, "final norm + LM head inputs") -
                row(plain, "activations") - row(plain, "final norm + LM head inputs"),
            layers * n * a * ((n + 1) * 4 + n * 2 - (n + 1) * 2) + experts + norms_and_casts);
}

}  // namespace
}  // namespace vramplan
