// Activations a transformer keeps for the backward pass, per layer and per microbatch, on one
// GPU. Korthikanti et al. 2022 (arXiv 2205.05198) generalised term by term: GQA, MLA, gated
// MLPs, MoE, flash vs materialised attention, dropout, sequence and context parallelism.
#pragma once

#include "base/term.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// Bytes of `values` quantised to fp8 with `recipe`'s scales: per-tensor recipes add nothing,
// blockwise (1×128 fp32 scales) and mxfp8 (one E8M0 scale per 32 values) add 1/32 byte each.
Wide fp8_activation_bytes(Wide values, Fp8Recipe recipe);
// One fp8 copy of `params` weights: blockwise adds an fp32 scale per 128×128 block, mxfp8 one
// byte per 32 values.
Wide fp8_weight_bytes(Wide params, Fp8Recipe recipe);

// What a column-parallel linear's saved input is divided by: t with sequence parallelism,
// unless the framework saves the all-gathered input (Conventions::sp_saves_gathered_inputs);
// 1 without sequence-parallel TP.
inline Wide column_input_divisor(const Parallelism& par, const Conventions& conv) {
  const bool sequence_parallel = par.sequence_parallel && par.tp > 1;
  if (!sequence_parallel || conv.sp_saves_gathered_inputs) return 1;
  return par.tp;
}

// Whether nanotron's persistent all-gather buffer exists (Conventions::tp_allgather_buffer):
// it replaces the fresh all-gathered tensor only where a column-parallel linear all-gathers its
// input yet saves the sequence shard.
inline bool has_tp_allgather_buffer(const Scenario& s) {
  return s.conventions.tp_allgather_buffer && column_input_divisor(s.parallel, s.conventions) > 1;
}

// What one norm keeps for its backward (docs/frameworks.md, "Model code"): bytes per value of
// its input and per token. A fused norm kernel (Megatron, Transformer Engine, Apex) keeps its
// input in the activation dtype. transformers' RMSNorms upcast to fp32 and keep the upcast plus
// the normalised value the weight multiplies: cast back to the activation dtype (Llama and kin,
// 4 + B) or still in fp32 (Gemma, OLMo-2, gpt-oss: 4 + 4), and the fp32 rsqrt per token;
// nn.LayerNorm (GPT-2) keeps its input and the fp32 mean and rstd per token.
struct NormKeeps {
  Wide per_value = 0;
  Wide per_token = 0;
  const char* expr = "B";  // per_value as the formulas write it
};
NormKeeps norm_keeps(const Scenario& s);

// LoRA's frozen base (docs/frameworks.md, "LoRA: what a frozen base saves"): autograd saves a
// linear's input only for its weight gradient, and a norm's normalised value only for its
// weight's, so with every base weight frozen (PEFT) neither is kept unless an adapter keeps the
// same tensor. Applies to transformers' dense decoder layers with standard attention (Phi-3's
// fused qkv_proj / gate_up_proj included; not GPT-2's Conv1D, nor MoE layers) and to the final norm
// and LM head. `norm_weight_part`: of NormKeeps::per_value, the bytes the weight's gradient needs.
bool lora_frozen_base(const Scenario& s);
// torch.autocast over transformers' stacked experts (transformers 5: grouped_mm, on no autocast
// list): the experts run in the parameter dtype, their weights uncast and their activations in
// that dtype (activations.cc add_moe, estimate_states.cc's autocast copies).
bool autocast_keeps_experts_in_param_dtype(const Scenario& s);
bool lora_frozen_layer(const Scenario& s, bool moe_layer);
// Routed experts LoRA leaves without adapters (finetune/peft_experts.h): their loop keeps
// neither the dispatched tokens nor the down projection's input. These four predicates live in
// finetune/lora_frozen.cc.
bool lora_frozen_experts(const Scenario& s);
Wide norm_weight_part(const Scenario& s);
// Whether a frozen linear's input stays saved because an adapter on it keeps that very tensor:
// adapters in the activation dtype get it uncast (lora_A saves it); in another dtype PEFT's
// _cast_input_dtype gives each adapter its own copy (finetune.cc counts those).
bool adapter_keeps_input(const Scenario& s, uint32_t projections);
// What the first trained layer does not keep when its input comes from a frozen embedding (or
// frozen layers) and needs no gradient. Under LoRA its input norm's weight is frozen too, so
// autograd records nothing for that norm; nor, with per-head q/k norms, for the norm of a
// projection without an adapter in that layer. With frozen layers and full training of the rest
// (transformers' RMSNorms), the input norm keeps only the normalised value its weight's gradient
// needs: not the fp32 upcast nor the rsqrt. Empty otherwise.
Term first_trained_layer_saving(const Scenario& s, bool explain);

// transformers' attention through SDPA as an H100 dispatches it (docs/frameworks.md, "Model
// code"): FlashAttention-2 for half-precision inputs with head_dim <= 256 and no mask, else the
// memory-efficient kernel, which takes equal head counts (K and V repeated to every query head
// are what it saves) and keeps the mask converted to the activation dtype.
// Whether the sliding-window layers get a mask: transformers skips it only while the sequence
// is shorter than the window (masking_utils _ignore_causal_mask_sdpa).
bool sliding_layers_masked(const Scenario& s);
// What one such masked sliding-window layer keeps beyond layer_activations(): its b·s² mask in
// the activation dtype and, unless every layer runs the efficient kernel already, K and V
// repeated to every head. 0 when sliding_layers_masked() is false.
Term masked_layer_extra(const Scenario& s, bool explain);

// transformers' SDPA on a grouped-query model where FlashAttention cannot run (fp32, heads over
// 256) and no mask is passed falls to the math kernel, which keeps the s×s probabilities
// (activations.cc, sdpa_math_kernel); its backward holds two more s×s gradients for one layer.
// 0 otherwise, and under selective recompute (which re-runs the core attention).
Term math_attention_backward_scratch(const Scenario& s, bool explain);

// What a layer's backward holds beside its saved activations as it starts, in its MLP
// (layers/backward_transient.cc): the layer's output gradient, and the larger of the down
// projection's input gradient plus, where the weight's .grad exists already, its new weight
// gradient, and a gated MLP's two f-wide input gradients of act·up. transformers' dense layers
// with trained weights; 0 elsewhere.
Term layer_backward_transient(const Scenario& s, bool weight_grad_exists, bool explain);

// Of an MoE layer's activations (layer_activations), what its MoE block keeps: router input and
// scores, dispatched tokens, expert outputs and intermediates, shared experts.
Wide moe_block_activations(const Scenario& s);

// Tokens of one microbatch on one context-parallel rank: n = s·b/c.
Wide tokens_per_rank(const Scenario& s);

// Everything one layer keeps for backward for one microbatch (no recompute, or selective). A
// hybrid model's layer says what mixes its tokens (attention, Mamba-2, gated DeltaNet or
// nothing) and whether it has an MLP.
Term layer_activations(const Scenario& s, bool moe_layer, bool explain,
                       LayerMixer mixer = LayerMixer::kAttention, bool has_mlp = true);

// What a fully recomputed layer keeps: its input hidden states.
Term recomputed_layer_input(const Scenario& s, bool explain);

// First stage: the embedding's own saved tensors (its dropout mask when dropout is on).
Term embedding_activations(const Scenario& s, bool explain);

// Last stage: inputs of the final norm and of the LM head, kept per microbatch in flight.
Term head_activations(const Scenario& s, bool explain);

// Vocabulary entries of the logits one TP rank holds: ⌈V/t⌉ with loss parallelism, V without
// (Parallelism::loss_parallel).
Wide logits_vocab(const Scenario& s);

// Last stage transient: the logits in the activation dtype plus the fp32 copy the cross-entropy
// works on (Megatron's vocab-parallel cross entropy casts to fp32 and keeps exp-logits).
Term logits_and_loss(const Scenario& s, bool explain);

// Of logits_and_loss, what exists for one microbatch at a time only: the backward's gradients
// of an unfused cross-entropy (transformers' model code: nll_loss's and log_softmax's fp32
// gradients, 8 B per logit). With several microbatches' losses alive (GPipe) the rest is kept
// per microbatch, this once.
Wide loss_backward_transient(const Scenario& s);
// Of logits_and_loss, what only its backward holds beyond its forward (transformers'
// ForCausalLMLoss: the forward's logits, fp32 copy and log_softmax, B + 4 + 4 bytes per logit, no
// copy when the logits are fp32 already; the backward's L). 0 for other model code.
Wide loss_backward_only(const Scenario& s);
// Of logits_and_loss, a chunked loss's (Conventions::loss_chunks) chunk in hand: its fp32 upcast
// (none when the activations are fp32 already) and, where the loss projects each chunk itself
// (loss_bytes_per_logit < B + 4: the logits are not kept), its logits in the activation dtype;
// `logits` entries on the rank split into loss_chunks chunks. 0 when the loss is not chunked.
Wide loss_chunk_transient(const Conventions& c, Wide logits, Wide activation_bytes);
// A chunked loss's backward (torchtune's chunked output with CEWithChunkedOutputLoss). The loss
// nodes are newer than the LM head's, so autograd runs every chunk's loss backward first: all C
// chunks' logit gradients (activation dtype) wait for the head. Each chunk's head backward then
// makes a V·h weight gradient that autograd adds to the sum of the earlier ones in the weight's
// input buffer (out of place): from the second chunk on, the sum, the new gradient and their
// sum, three V·h, beside the C−2 logit gradients not yet consumed. Seen on the reference's live
// tensors (Llama 3.1 8B, Qwen2.5 7B: to the MiB). What the larger of the first and the second
// chunk's moment holds beyond the forward's `forward` bytes, where the head's weight trains;
// `logits` and `head_weight` are the rank's entries of each.
Wide chunked_loss_backward_excess(const Conventions& c, bool head_trains, Wide logits,
                                  Wide head_weight, Wide activation_bytes, Wide param_bytes,
                                  Wide forward);

// One microbatch's output of the last pipeline stage, the logits in the activation dtype
// (Conventions::pipeline_keeps_last_outputs).
Wide last_stage_output_bytes(const Scenario& s);

}  // namespace vramplan
