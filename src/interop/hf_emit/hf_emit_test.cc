// --emit deepspeed / accelerate / torchtune: what each writes, that --from reads it back to the
// same estimate, and what each refuses.
#include <gtest/gtest.h>

#include "vramplan/interop/emit.h"
#include "vramplan/interop/import.h"
#include "vramplan/io/estimate_request.h"

namespace vramplan {
namespace {

using nlohmann::json;

struct Emitted {
  std::string text;
  Result<SettingsEstimate> direct = Error{};
};

Emitted emit(const json& settings, const std::string& format) {
  Emitted out;
  out.direct = estimate_settings(settings, nullptr);
  EXPECT_TRUE(out.direct.ok()) << out.direct.error().message();
  if (!out.direct.ok()) return out;
  Result<std::string> text = emit_training(out.direct->resolved.scenario, settings, format);
  EXPECT_TRUE(text.ok()) << text.error().message();
  if (text.ok()) out.text = *text;
  return out;
}

// The estimate --from gives for `text` equals the direct one, with no warnings.
void expect_round_trip(const json& settings, const std::string& format) {
  Emitted e = emit(settings, format);
  if (e.text.empty()) return;
  Result<SettingsEstimate> back = estimate_settings({{"from", e.text}}, nullptr);
  ASSERT_TRUE(back.ok()) << back.error().message() << "\n" << e.text;
  ASSERT_TRUE(back->resolved.imported.has_value());
  EXPECT_EQ(back->resolved.imported->format, format);
  EXPECT_TRUE(back->resolved.imported->warnings.empty())
      << back->resolved.imported->warnings.front() << "\n"
      << e.text;
  EXPECT_EQ(back->estimate.peak.allocated_bytes, e.direct->estimate.peak.allocated_bytes) << e.text;
  EXPECT_EQ(back->estimate.peak.reserved_bytes, e.direct->estimate.peak.reserved_bytes) << e.text;
  EXPECT_EQ(back->estimate.world_size, e.direct->estimate.world_size);
}

std::string refusal(const json& settings, const std::string& format) {
  Result<SettingsEstimate> direct = estimate_settings(settings, nullptr);
  EXPECT_TRUE(direct.ok()) << direct.error().message();
  if (!direct.ok()) return "";
  Result<std::string> text = emit_training(direct->resolved.scenario, settings, format);
  EXPECT_FALSE(text.ok());
  if (text.ok()) return "";
  EXPECT_EQ(text.error().field, "emit");
  return text.error().reason + " | " + text.error().accepted;
}

const json kTorchtune = {
    {"param_dtype", "bf16"},   {"grad_dtype", "bf16"},      {"optimizer_dtype", "bf16"},
    {"master_weights", false}, {"fp32_grad_accum", false},  {"model_code", "torchtune"},
    {"lazy_gradients", true},  {"allocator_overhead", 0.2}, {"loss_bytes_per_logit", 6}};

json with(json base, const json& more) {
  for (auto it = more.begin(); it != more.end(); ++it) base[it.key()] = it.value();
  return base;
}

TEST(HfEmit, DeepspeedWritesItsConfigAndTheTrainersArguments) {
  const json s = {
      {"model", "Llama-3.1-8B"}, {"framework", "deepspeed"}, {"zero", 3},          {"gpus", 16},
      {"micro_batch", 2},        {"global_batch", 128},      {"recompute", "full"}};
  Emitted e = emit(s, "deepspeed");
  EXPECT_NE(e.text.find("cat > ds_config.json <<'EOF'"), std::string::npos);
  EXPECT_NE(e.text.find("\"stage\": 3"), std::string::npos);
  EXPECT_NE(e.text.find("deepspeed --num_gpus 8 --num_nodes 2 train.py"), std::string::npos);
  EXPECT_NE(e.text.find("--gradient_accumulation_steps 4"), std::string::npos);
  EXPECT_NE(e.text.find("--gradient_checkpointing"), std::string::npos);
  expect_round_trip(s, "deepspeed");
  expect_round_trip({{"model", "Llama-3.1-8B"},
                     {"framework", "deepspeed"},
                     {"zero", 2},
                     {"gpus", 8},
                     {"finetune", "qlora"},
                     {"optimizer", "adamw"},
                     {"optimizer_foreach_temporaries", true}},
                    "deepspeed");
}

TEST(HfEmit, AccelerateWritesFsdpDdpAndDeepspeed) {
  const json fsdp = {{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"},
                     {"fsdp", "full_shard"},    {"fsdp_mixed_precision", true},
                     {"reduce_dtype", "bf16"},  {"gpus", 8},
                     {"recompute", "full"}};
  Emitted e = emit(fsdp, "accelerate");
  EXPECT_NE(e.text.find("distributed_type: FSDP"), std::string::npos);
  EXPECT_NE(e.text.find("fsdp_activation_checkpointing: true"), std::string::npos);
  EXPECT_EQ(e.text.find("--gradient_checkpointing"), std::string::npos);  // FSDP recomputes
  expect_round_trip(fsdp, "accelerate");
  expect_round_trip({{"model", "Qwen2.5-7B"}, {"framework", "hf-trainer"}, {"gpus", 2}},
                    "accelerate");
  expect_round_trip(
      {{"model", "Llama-3.1-8B"}, {"framework", "deepspeed"}, {"zero", 1}, {"gpus", 8}},
      "accelerate");
  // Weights loaded in bf16 (--torch_dtype), LoRA adapters in fp32 as PEFT keeps them.
  expect_round_trip({{"model", "Llama-3.1-8B"},
                     {"framework", "hf-trainer"},
                     {"gpus", 1},
                     {"param_dtype", "bf16"},
                     {"grad_dtype", "bf16"},
                     {"master_weights", false},
                     {"fp32_grad_accum", false},
                     {"finetune", "lora"},
                     {"adapter_dtype", "fp32"}},
                    "accelerate");
}

TEST(HfEmit, TorchtuneWritesARecipe) {
  const json lora = with(kTorchtune, {{"model", "Llama-3.1-8B"},
                                      {"finetune", "lora"},
                                      {"lora_targets", "q,v"},
                                      {"adapter_dtype", "bf16"},
                                      {"recompute", "full"}});
  Emitted e = emit(lora, "torchtune");
  EXPECT_NE(e.text.find("tune run lora_finetune_single_device"), std::string::npos);
  EXPECT_NE(e.text.find("torchtune.models.llama3_1.lora_llama3_1_8b"), std::string::npos);
  EXPECT_NE(e.text.find("lora_attn_modules: ['q_proj', 'v_proj']"), std::string::npos);
  expect_round_trip(lora, "torchtune");
  expect_round_trip(with(kTorchtune, {{"model", "Llama-3.1-70B"},
                                      {"gpus", 16},
                                      {"fsdp", "full_shard"},
                                      {"recompute", "full"},
                                      {"seq_len", 2048}}),
                    "torchtune");
}

TEST(HfEmit, WhatAFormatCannotExpressIsAnErrorNamingEmit) {
  EXPECT_NE(
      refusal({{"model", "Llama-3.1-8B"}, {"gpus", 8}}, "deepspeed").find("--framework deepspeed"),
      std::string::npos);
  EXPECT_NE(refusal({{"model", "Llama-3.1-8B"}, {"framework", "deepspeed"}, {"gpus", 8}, {"pp", 2}},
                    "deepspeed")
                .find("pp = 2"),
            std::string::npos);
  EXPECT_NE(refusal({{"model", "Llama-3.1-8B"},
                     {"framework", "deepspeed"},
                     {"gpus", 8},
                     {"optimizer", "adamw"},
                     {"optimizer_dtype", "bf16"}},
                    "deepspeed")
                .find("optimizer_dtype fp32"),
            std::string::npos);
  EXPECT_NE(refusal({{"model", "Llama-3.1-8B"}, {"framework", "hf-trainer"}, {"optimizer", "muon"}},
                    "accelerate")
                .find("Muon"),
            std::string::npos);
  EXPECT_NE(refusal(with(kTorchtune, {{"model", "Llama-3.1-8B"},
                                      {"finetune", "lora"},
                                      {"lora_targets", "q,v,gate"},
                                      {"adapter_dtype", "bf16"}}),
                    "torchtune")
                .find("all of the MLP"),
            std::string::npos);
  EXPECT_NE(refusal(with(kTorchtune, {{"model", "Llama-3.1-8B"}, {"loss_bytes_per_logit", 7}}),
                    "torchtune")
                .find("7 bytes per logit"),
            std::string::npos);
  EXPECT_NE(
      refusal(with(kTorchtune, {{"model", "Llama-3.1-8B"}, {"gpus", 2}, {"zero", 1}}), "torchtune")
          .find("FSDP"),
      std::string::npos);
}

}  // namespace
}  // namespace vramplan
