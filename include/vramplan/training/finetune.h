// Fine-tuning memory: frozen weights keep no gradients, master copies or optimizer states (but
// the activations for the backward through them stay); LoRA adds low-rank adapters, r·(in + out)
// per targeted projection; QLoRA stores the frozen linear layers in NF4 with double
// quantisation and trains bf16 adapters with a paged 8-bit AdamW. The settings live in
// Scenario::finetune (scenario.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// "q,v", "attention" (q,k,v,o), "mlp" (gate,up,down), "all-linear", or a comma-separated list
// of q, k, v, o, gate, up, down (also q_proj, ..., down_proj). Errors name lora_targets.
Result<uint32_t> parse_lora_targets(std::string_view text);
std::string lora_targets_text(uint32_t targets);  // "q,v"

// Adapter parameters of the whole model without parallelism: r·(in + out) per targeted
// projection per layer (routed experts each get their own; under transformers' model code PEFT
// wraps the stacked experts instead, or leaves them out: training/finetune/peft_experts.h).
// PEFT's LoRA r = 8 on q,v of Llama-2-7B: 32 layers × 2 × 8·(4096 + 4096) = 4,194,304.
int64_t lora_parameters(const ModelConfig& model, const Finetune& finetune,
                        ModelCode code = ModelCode::kDefault);

// Whether the fine-tuning settings change anything (a method, or frozen parts).
bool finetune_active(const Finetune& finetune);

// Rank, frozen layers and targets the model has; errors name the setting.
std::optional<Error> validate_finetune(const Scenario& scenario);

// The attention targets that name a projection the model has, by PEFT's module names: q, k, v,
// o on standard attention; q (only without q_lora_rank), q_a, q_b, kv_a, kv_b, o on MLA.
uint32_t attention_targets_of(const ModelConfig& model);
// A note when some of the LoRA targets name no projection of the model (PEFT adds no adapter
// for them); "" otherwise.
std::string unmatched_lora_targets_note(const Scenario& scenario);

}  // namespace vramplan
