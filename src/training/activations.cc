#include "training/activations.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "training/layers/layer_terms.h"
#include "vramplan/model/precision.h"

namespace vramplan {
namespace {

// torch.autocast over fp32 weights in transformers' code (the Trainer's --bf16): the residual
// stream stays fp32, so its RMSNorms keep the normalised value in fp32 (weight * hidden.to(fp32
// input dtype)), and each linear reading it casts its own bf16 copy of the input, kept for its
// weight gradient (autocast caches weights, not activations): q, k and v three copies, gate and
// up two. Seen on the reference's live tensors (Mistral-7B amp: eleven n·h bf16 copies in two
// layers and the head).
bool autocast_fp32_residual(const Scenario& s) {
  return s.conventions.autocast_weight_cache && s.training.param_dtype == DType::kFp32 &&
         s.training.activation_dtype != DType::kFp32 &&
         s.conventions.model_code == ModelCode::kTransformers;
}

// The copies beyond the first of an input `linears` separate projections read under autocast.
void add_autocast_input_copies(const Scenario& s, const Dims& d, const char* label, Wide linears,
                               SumBuilder& sum) {
  if (!autocast_fp32_residual(s) || linears <= 1 || d.fp8) return;
  const std::string expr = fmt::format("{}·n·h·B/t_sp", static_cast<int64_t>(linears - 1));
  sum.add(label, expr.c_str(), (linears - 1) * d.n * d.h * d.bytes / d.t_in);
}

// What a norm on the residual stream keeps: norm_keeps, with the normalised value in fp32 where
// autocast leaves the residual in fp32.
NormKeeps residual_norm_keeps(const Scenario& s) {
  const NormKeeps keeps = norm_keeps(s);
  if (!autocast_fp32_residual(s) || s.model.norm == NormKind::kLayerNorm) return keeps;
  return {8, 4, "(4+4)"};
}

// transformers' GPT-2 (activation_function "gelu_new", NewGELUActivation) computes its GELU as
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) in separate ops, and autograd keeps x, 0.5·x, the
// tanh output and 1 + tanh besides the product the second linear saves: 5 f-wide tensors.
bool transformers_gpt2(const Scenario& s) {
  return s.conventions.model_code == ModelCode::kTransformers && s.model.model_type == "gpt2";
}

// transformers under SDPA: the memory-efficient kernel for every layer (fp32 inputs, or heads
// wider than FlashAttention-2's 256).
bool efficient_kernel_everywhere(const Scenario& s) {
  const DType dt = s.training.activation_dtype;
  return s.conventions.model_code == ModelCode::kTransformers && s.training.flash_attention &&
         ((dt != DType::kBf16 && dt != DType::kFp16) || s.model.head_dim > 256);
}

// transformers passes SDPA fewer K/V heads (enable_gqa=True) when it passes no mask
// (integrations/sdpa_attention.py, use_gqa_in_sdpa); on CUDA only FlashAttention takes them: the
// memory-efficient kernel requires equal head counts (PyTorch aten/src/ATen/native/transformers/
// cuda/sdp_utils.cpp, check_batch_size_and_num_heads_dense<supports_gqa = false>). Where flash
// cannot run (fp32 inputs, heads over 256) a grouped-query model without a mask therefore runs
// SDPA's math kernel (attention.cpp, _scaled_dot_product_attention_math): K and V repeated to
// every head, the scaled Q and K, and the s×s probabilities in the activation dtype, kept per
// layer. Measured on an H200 (data/measurements/gpu_measured.json). Models whose sliding-window
// layers get a mask stay with the efficient kernel's accounting for every layer.
bool sdpa_math_kernel(const Scenario& s) {
  return efficient_kernel_everywhere(s) && s.model.num_kv_heads < s.model.num_heads &&
         s.model.attention == AttentionKind::kStandard && !sliding_layers_masked(s);
}

void add_standard_attention(const Scenario& s, const Dims& d, bool frozen, SumBuilder& sum) {
  const ModelConfig& m = s.model;
  const Wide a = m.num_heads, g = m.num_kv_heads, hd = m.head_dim;
  if (!frozen || adapter_keeps_input(s, kLoraQ | kLoraK | kLoraV)) {
    add_linear_input(d, "QKV input", sum);
    const bool fused = m.model_type == "phi3" || m.model_type == "gpt2";  // one qkv linear
    add_autocast_input_copies(s, d, "QKV input, autocast's copy per projection", fused ? 1 : 3,
                              sum);
  }
  sum.add("Q,K,V", "n·(a+2g)·d·B/t", d.n * (a + 2 * g) * hd * d.bytes / d.t);
  // torchtune's MultiHeadAttention expands K and V to every query head (unsqueeze, expand,
  // flatten: a copy) before SDPA, whichever kernel runs (torchtune/modules/attention.py).
  const bool torchtune_repeats = s.conventions.model_code == ModelCode::kTorchtune;
  if ((efficient_kernel_everywhere(s) || torchtune_repeats) && g < a)
    sum.add(torchtune_repeats     ? "K,V repeated to every head (torchtune's attention)"
            : sdpa_math_kernel(s) ? "K,V repeated to every head (SDPA math kernel)"
                                  : "K,V repeated to every head (memory-efficient kernel)",
            "n·2(a−g)·d·B/t", d.n * 2 * (a - g) * hd * d.bytes / d.t);
  // Phi-3's fused qkv_proj: V is a view of its output, so the whole Q|K|V storage stays alive
  // beside the rotated Q and K (modeling_phi3.py: query_states = qkv[..., :query_pos]).
  if (s.conventions.model_code == ModelCode::kTransformers && m.model_type == "phi3")
    sum.add("fused Q|K|V output (Q,K parts)", "n·(a+g)·d·B/t", d.n * (a + g) * hd * d.bytes / d.t);
  // GPT-2's Q, K, V are unrotated split views of c_attn's output, not dense: the kernel's output
  // takes the plain (b, a, s, d) layout, and transposing it back for c_proj copies it.
  if (transformers_gpt2(s))
    sum.add("attention output copy for c_proj", "n·a·d·B/t", d.n * a * hd * d.bytes / d.t);
  if (holds_kv_twice(s))
    sum.add("K,V again (packed Q|K|V buffer)", "n·2g·d·B/t", d.n * 2 * g * hd * d.bytes / d.t);
  NormKeeps keeps = norm_keeps(s);
  if (frozen) keeps.per_value -= norm_weight_part(s);
  if (m.qk_norm) {  // one norm per head: a + g rows of d per token
    const std::string expr = fmt::format("n·(a+g)·(d·{}+{})/t", keeps.expr, keeps.per_token);
    sum.add("q/k norm inputs", expr.c_str(),
            d.n * (a + g) * (hd * keeps.per_value + keeps.per_token) / d.t);
  } else if (m.qk_norm_full_width) {  // one norm over all of q and one over all of k
    const std::string expr = fmt::format("n·((a+g)·d·{}+2·{})/t", keeps.expr, keeps.per_token);
    sum.add("q/k norm inputs", expr.c_str(),
            d.n * ((a + g) * hd * keeps.per_value + 2 * keeps.per_token) / d.t);
  }
  // The kernel keeps its output, which is also the output projection's input.
  add_attention_output(d, a * hd, "n·a·d", sum);
}

// The s×s part of attention, or flash attention's softmax statistics.
// transformers' eager_attention_forward: repeat_kv copies K and V to every query head (both
// saved by the matmuls); softmax(scores, dtype=float32) keeps its fp32 output and .to(dtype) the
// probabilities the second matmul saves (the same tensor in fp32). Gemma 2 soft-caps the scores
// first (tanh, whose output is kept); gpt-oss appends one sink logit per row and runs the
// softmax in the activation dtype, keeping only its output.
void add_transformers_eager_attention(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const ModelConfig& m = s.model;
  const Wide a = m.num_heads, g = m.num_kv_heads, hd = m.head_dim;
  const Wide s_full = s.training.seq_len;
  if (g < a && m.attention == AttentionKind::kStandard)
    sum.add("K,V repeated to every head (repeat_kv)", "n·2(a−g)·d·B/t",
            d.n * 2 * (a - g) * hd * d.bytes / d.t);
  if (m.attention_sinks && autocast_fp32_residual(s)) {
    // Under autocast the fp32 sinks promote the concatenated logits (cat is on autocast's
    // promote list): the softmax runs and is kept in fp32, and the value matmul keeps its own
    // bf16 cast of the probabilities without the sink column (gpt-oss; the reference's tensors).
    sum.add("softmax output (fp32 under autocast, with the sink column)", "n·(s+1)·a·4/t",
            d.n * (s_full + 1) * a * 4 / d.t);
    sum.add("probabilities cast for the value matmul", "n·s·a·B/t",
            d.n * s_full * a * d.bytes / d.t);
    return;
  }
  if (m.attention_sinks) {
    sum.add("softmax output (with the sink column)", "n·(s+1)·a·B/t",
            d.n * (s_full + 1) * a * d.bytes / d.t);
    return;
  }
  if (m.model_type == "gemma2")
    sum.add("soft-capped scores (tanh output)", "n·s·a·B/t", d.n * s_full * a * d.bytes / d.t);
  sum.add("softmax output (fp32)", "n·s·a·4/t", d.n * s_full * a * 4 / d.t);
  if (d.bytes != 4)
    sum.add("probabilities cast back", "n·s·a·B/t", d.n * s_full * a * d.bytes / d.t);
}

void add_attention_core(const Scenario& s, const Dims& d, SumBuilder& sum) {
  const Training& tr = s.training;
  const Wide a = s.model.num_heads;
  const bool selective = tr.recompute == Recompute::kSelective;
  if (tr.flash_attention && sdpa_math_kernel(s)) {
    if (!selective)
      sum.add("attention probabilities (SDPA math kernel)", "n·s·a·B/t",
              d.n * tr.seq_len * a * d.bytes / d.t);
    return;
  }
  if (tr.flash_attention) {
    // Selective recompute re-runs core attention, so its statistics are not kept.
    if (!selective) sum.add("softmax stats", "n·a·4/t", d.n * a * 4 / d.t);
    return;
  }
  if (selective) return;  // Korthikanti's selective recompute drops exactly the 5·a·s² terms
  const Wide s_full = tr.seq_len;  // each CP rank's queries attend to the whole sequence
  if (s.conventions.model_code == ModelCode::kTransformers) {
    add_transformers_eager_attention(s, d, sum);
  } else {
    sum.add("softmax output", "n·s·a·B/t", d.n * s_full * a * d.bytes / d.t);
  }
  if (tr.dropout) {
    sum.add("attention dropout mask", "n·s·a/t", d.n * s_full * a / d.t);
    sum.add("attention dropout output", "n·s·a·B/t", d.n * s_full * a * d.bytes / d.t);
  }
}

// transformers' GptOssExperts (modeling_gpt_oss.py) run a clamped SwiGLU, gate·σ(α·gate)·(up+1),
// in separate ops: autograd keeps the gate_up output (2 f-wide, the clamps' inputs), the clamped
// gate, σ's output, gate·σ and up + 1 — 6 f-wide tensors — and the down projection its input.
bool transformers_gpt_oss(const Scenario& s) {
  return s.conventions.model_code == ModelCode::kTransformers && s.model.model_type == "gpt_oss";
}

// f-wide tensors a gated (per framework, see Conventions) or plain MLP keeps per token.
Wide mlp_intermediate_factor(const Scenario& s) {
  if (transformers_gpt_oss(s)) return 7;
  if (s.model.mlp == MlpKind::kGated) return s.conventions.gated_mlp_tensors;
  return transformers_gpt2(s) ? 5 : 2;
}

// An MLP's f-wide tensors: G (or 2) in the activation dtype; with fp8 the last one, the
// down-projection's input, is kept as its fp8 cast instead.
// `values / divisor` is one tensor's element count (the division last, as the bf16 formula).
void add_mlp_intermediates(const Scenario& s, const Dims& d, const char* label, Wide values,
                           Wide divisor, const char* width, const char* per, SumBuilder& sum) {
  // G in the formula is the framework's count; gpt-oss's experts write their own (above).
  const bool gated = s.model.mlp == MlpKind::kGated && !transformers_gpt_oss(s);
  const Wide tensors = mlp_intermediate_factor(s);
  const std::string w(width);
  if (!d.fp8) {
    const std::string expr =
        (gated ? std::string("G·") : fmt::format("{}·", static_cast<int64_t>(tensors))) + w + "·" +
        d.bytes_expr + per;
    sum.add(label, expr.c_str(), tensors * values * d.bytes / divisor);
    return;
  }
  const std::string expr =
      std::string(gated ? "(G−1)·" : "") + w + "·B" + per + " + " + w + "·q" + per;
  sum.add(label, expr.c_str(),
          (tensors - 1) * values * d.bytes / divisor +
              fp8_activation_bytes(values / divisor, d.recipe));
}

void add_dense_mlp(const Scenario& s, const Dims& d, bool frozen, SumBuilder& sum) {
  const ModelConfig& m = s.model;
  if (!frozen || adapter_keeps_input(s, kLoraGate | kLoraUp)) {
    add_linear_input(d, "MLP input", sum);
    const bool separate_gate = m.mlp == MlpKind::kGated && m.model_type != "phi3";
    add_autocast_input_copies(s, d, "MLP input, autocast's copy per projection",
                              separate_gate ? 2 : 1, sum);
  }
  if (!frozen || adapter_keeps_input(s, kLoraDown)) {
    add_mlp_intermediates(s, d, "MLP intermediates", d.n * m.ffn, d.t, "n·f", "/t", sum);
    return;
  }
  // A frozen down projection does not keep its input, the last f-wide tensor.
  const Wide tensors = mlp_intermediate_factor(s) - 1;
  const std::string expr = fmt::format("{}·n·f·B/t (frozen down projection)", tensors);
  sum.add("MLP intermediates", expr.c_str(), tensors * d.n * m.ffn * d.bytes / d.t);
}

void add_moe(const Scenario& s, const Dims& d, bool frozen_experts, SumBuilder& sum) {
  const ModelConfig& m = s.model;
  const MoeConfig& moe = m.moe;
  const Wide etp = s.parallel.etp;
  sum.add("router/expert input", "n·h·B/t_sp", d.n * d.h * d.bytes / d.t_sp);
  sum.add("router scores (fp32)", "2·n·E·4/t_sp", 2 * d.n * moe.num_experts * 4 / d.t_sp);
  // Dispatched token copies on this GPU: every token goes to k experts; EP balances them over
  // the expert group, expert-TP gathers tokens across its etp ranks.
  const Wide routed = d.n * moe.top_k * etp / d.t_sp;
  // Under autocast, transformers' stacked experts take the fp32 residual stream and fp32
  // weights: their tokens and intermediates are kept in the parameter dtype.
  const Dims routed_dims = [&] {
    Dims e = d;
    if (autocast_keeps_experts_in_param_dtype(s)) {
      e.bytes = bytes_of(1, s.training.param_dtype);
      e.bytes_expr = e.bytes == 4 ? "4" : "2";
    }
    return e;
  }();
  const std::string eb = routed_dims.bytes_expr;
  if (frozen_experts && !d.fp8) {
    // Experts whose weights need no gradient (LoRA without expert adapters, transformers' loop
    // over experts): linear keeps no input, so neither the dispatched tokens nor the
    // down-projection's input are kept; the gate, up and activation outputs and the expert
    // outputs (for the routing weights' gradient) are.
    const std::string out_expr = "n·k·etp·h·" + eb + "/t_sp";
    sum.add("expert outputs (frozen experts)", out_expr.c_str(), routed * d.h * routed_dims.bytes);
    const Wide tensors = mlp_intermediate_factor(s) - 1;
    const std::string expr = fmt::format("{}·n·k·etp·f_e/etp·{}/t_sp (frozen experts)",
                                         static_cast<int64_t>(tensors), eb);
    sum.add("expert intermediates", expr.c_str(),
            tensors * routed * (moe.expert_ffn / etp) * routed_dims.bytes);
  } else if (d.fp8) {
    sum.add("dispatched tokens (fp8) + expert outputs", "n·k·etp·h·(q+B)/t_sp",
            fp8_activation_bytes(routed * d.h, d.recipe) + routed * d.h * d.bytes);
  } else {
    const std::string expr = "2·n·k·etp·h·" + eb + "/t_sp";
    sum.add("dispatched tokens + expert outputs", expr.c_str(),
            2 * routed * d.h * routed_dims.bytes);
  }
  if (!frozen_experts || d.fp8)
    add_mlp_intermediates(s, routed_dims, "expert intermediates", routed * (moe.expert_ffn / etp),
                          1, "n·k·etp·f_e/etp", "/t_sp", sum);
  if (moe.shared_experts > 0) {
    // With fp8 the shared experts' first linear keeps its own cast of the router's input.
    if (d.fp8)
      sum.add("shared-expert input (fp8)", "n·h·q/t_sp",
              fp8_activation_bytes(d.n * d.h / d.t_sp, d.recipe));
    const Wide width = moe.shared_experts * moe.shared_expert_ffn;
    add_mlp_intermediates(s, d, "shared-expert intermediates", d.n * width, d.t, "n·S·f_s", "/t",
                          sum);
  }
}

// torchtitan's op-level selective checkpointing (torchtitan/distributed/activation_checkpoint.py,
// _custom_policy): inside each layer the outputs of scaled-dot-product attention and of every
// other matmul are saved (the 1st, 3rd, 5th, 7th: wq, wv, w1, w2 in a Llama layer; fc1 in a
// plain MLP); norms, activations and the other matmuls are recomputed from the layer input.
Term op_level_checkpointed_layer(const Scenario& s, const Dims& d, bool explain) {
  const ModelConfig& m = s.model;
  const Wide a = m.num_heads, g = m.num_kv_heads, hd = m.head_dim;
  SumBuilder sum(explain);
  sum.add("layer input", "n·h·B/t_sp", d.n * d.h * d.bytes / d.t_sp);
  sum.add("Q, V (1st, 3rd matmul)", "n·(a+g)·d·B/t", d.n * (a + g) * hd * d.bytes / d.t);
  sum.add("attention output + logsumexp", "n·a·(d·B+4)/t", d.n * a * (hd * d.bytes + 4) / d.t);
  sum.add("MLP up (5th matmul)", "n·f·B/t", d.n * m.ffn * d.bytes / d.t);
  // A row-parallel matmul's output is the full-width partial sum, before its reduce.
  if (m.mlp == MlpKind::kGated) sum.add("MLP down (7th matmul)", "n·h·B", d.n * d.h * d.bytes);
  return sum.finish(preamble(s, d));
}

// transformers' RMSNorms that multiply the weight in fp32 before casting back (T5LayerNorm's
// form: GemmaRMSNorm's output * (1 + weight.float()), Olmo2RMSNorm's and GptOssRMSNorm's
// (weight * hidden_states).to(input_dtype)) keep the fp32 normalised value for the weight's
// gradient; LlamaRMSNorm and its copies (weight * hidden_states.to(input_dtype)) keep it cast
// back to the activation dtype.
bool norm_weight_in_fp32(const std::string& model_type) {
  return model_type.rfind("gemma", 0) == 0 || model_type == "olmo2" || model_type == "gpt_oss";
}

}  // namespace

Wide moe_block_activations(const Scenario& s) {
  SumBuilder sum(false);
  add_moe(s, dims_of(s), lora_frozen_experts(s), sum);
  return sum.finish("").bytes;
}

NormKeeps norm_keeps(const Scenario& s) {
  const Wide b = bytes_of(1, s.training.activation_dtype);
  // torchtune's RMSNorm: F.rms_norm(x.float(), weight=scale).to(x.dtype). With a bf16 weight
  // beside fp32 input, PyTorch's composite (not _fused_rms_norm, which wants one dtype) keeps
  // the fp32 input, the fp32 rsqrt per token and the fp32 normalised value the weight multiplies.
  if (s.conventions.model_code == ModelCode::kTorchtune) return {8, 4, "(4+4)"};
  if (s.conventions.model_code != ModelCode::kTransformers) return {b, 0, "B"};
  if (s.model.norm == NormKind::kLayerNorm) return {b, 8, "B"};  // input; fp32 mean and rstd
  if (norm_weight_in_fp32(s.model.model_type)) return {8, 4, "8"};
  return {4 + b, 4, "(4+B)"};
}

Wide norm_weight_part(const Scenario& s) {
  if (s.conventions.model_code == ModelCode::kTorchtune) return 4;
  if (s.conventions.model_code != ModelCode::kTransformers) return 0;
  if (s.model.norm == NormKind::kLayerNorm) return 0;  // native_layer_norm keeps its input
  if (norm_weight_in_fp32(s.model.model_type)) return 4;
  return bytes_of(1, s.training.activation_dtype);
}

Term first_trained_layer_saving(const Scenario& s, bool explain) {
  const bool lora = lora_frozen_base(s);
  // Full training after frozen layers: nothing before the layer needs a gradient. OLMo-2
  // normalises after attention and MLP (post-norm): its input goes to the projections as is.
  const Finetune& f = s.finetune;
  const bool after_frozen = f.method == FinetuneMethod::kNone && f.freeze_embeddings &&
                            s.conventions.model_code == ModelCode::kTransformers &&
                            s.model.norm != NormKind::kLayerNorm && s.model.model_type != "olmo2";
  if (!lora && !after_frozen) return {};
  const Dims d = dims_of(s);
  const ModelConfig& m = s.model;
  // What the input norm keeps beyond its weight's part (the fp32 upcast and rsqrt): under LoRA
  // the counted layer already leaves the weight's part out, after frozen layers it stays.
  NormKeeps keeps = norm_keeps(s);
  keeps.per_value -= norm_weight_part(s);
  SumBuilder sum(explain);
  const std::string norm =
      fmt::format("n·(h·{}+{})/t_sp", static_cast<int64_t>(keeps.per_value), keeps.per_token);
  sum.add(lora ? "input norm (its input needs no gradient)"
               : "input norm's fp32 upcast and rsqrt (its input needs no gradient)",
          norm.c_str(), d.n * (d.h * keeps.per_value + keeps.per_token) / d.t_sp);
  if (!lora) return sum.finish(preamble(s, d));
  if (m.attention == AttentionKind::kStandard && m.qk_norm) {
    const uint32_t targets = s.finetune.lora_targets;
    const Wide per_head = m.head_dim * keeps.per_value + keeps.per_token;
    if ((targets & kLoraK) == 0)
      sum.add("k norm (frozen k projection)", "n·g·(d·…)/t", d.n * m.num_kv_heads * per_head / d.t);
    if ((targets & kLoraQ) == 0)
      sum.add("q norm (frozen q projection)", "n·a·(d·…)/t", d.n * m.num_heads * per_head / d.t);
  }
  // MLA's latent norms likewise, where the down-projection before them has no adapter.
  if (m.attention == AttentionKind::kMla) {
    const uint32_t targets = s.finetune.lora_targets;
    const Wide kv = m.mla.kv_lora_rank, q = m.mla.q_lora_rank;
    if ((targets & kLoraKVA) == 0)
      sum.add("kv latent norm (frozen kv_a projection)", "n·(kv_lora·…)",
              d.n * (kv * keeps.per_value + keeps.per_token));
    if (q > 0 && (targets & kLoraQA) == 0)
      sum.add("q latent norm (frozen q_a projection)", "n·(q_lora·…)",
              d.n * (q * keeps.per_value + keeps.per_token));
  }
  return sum.finish(preamble(s, d));
}

bool sliding_layers_masked(const Scenario& s) {
  // transformers decides from the hidden states it is given. Under sequence parallelism the
  // plans hand the decoder the embedding's output as the rank's sequence shard
  // (RowwiseParallel(output_layouts=Shard(1)) returns a local tensor), so it sees s/t tokens.
  const bool sequence_parallel = s.parallel.sequence_parallel && s.parallel.tp > 1;
  const Wide seen = s.training.seq_len / (sequence_parallel ? s.parallel.tp : 1);
  return s.conventions.model_code == ModelCode::kTransformers && s.training.flash_attention &&
         s.model.attention == AttentionKind::kStandard && s.model.sliding_window > 0 &&
         seen >= s.model.sliding_window;
}

// SDPA's math kernel in the backward of one layer (attention.cpp, the composite's autograd):
// matmul(probs, V)'s backward makes the gradient of the probabilities, and the softmax's
// backward the gradient of the scores beside it, each b·(a/t)·s² in the activation dtype.
Term math_attention_backward_scratch(const Scenario& s, bool explain) {
  if (!sdpa_math_kernel(s) || s.training.recompute == Recompute::kSelective) return {};
  const Wide b = s.training.micro_batch, seq = s.training.seq_len;
  const Wide a = s.model.num_heads, t = s.parallel.tp;
  const Wide bytes = bytes_of(1, s.training.activation_dtype);
  Term out{2 * b * ceil_div(a, t) * seq * seq * bytes, ""};
  if (explain)
    out.formula = fmt::format(
        "2·b·(a/t)·s²·B = 2·{}·({}/{})·{}²·{} (gradients of the "
        "probabilities and of the scores, one layer)",
        b, a, t, seq, bytes);
  return out;
}

Term masked_layer_extra(const Scenario& s, bool explain) {
  if (!sliding_layers_masked(s)) return {};
  const Dims d = dims_of(s);
  const ModelConfig& m = s.model;
  const Wide a = m.num_heads, g = m.num_kv_heads, hd = m.head_dim;
  SumBuilder sum(explain);
  const Wide b = s.training.micro_batch, seq = s.training.seq_len;
  sum.add("sliding-window mask", "b·s²·B", b * seq * seq * d.bytes);
  if (!efficient_kernel_everywhere(s) && g < a)
    sum.add("K,V repeated to every head", "n·2(a−g)·d·B/t", d.n * 2 * (a - g) * hd * d.bytes / d.t);
  return sum.finish(preamble(s, d));
}

Wide fp8_activation_bytes(Wide values, Fp8Recipe recipe) {
  return values + (has_block_scales(recipe) ? ceil_div(values, 32) : 0);
}

Wide fp8_weight_bytes(Wide params, Fp8Recipe recipe) {
  if (recipe == Fp8Recipe::kBlockwise) return params + 4 * ceil_div(params, 128 * 128);
  if (recipe == Fp8Recipe::kMxfp8) return params + ceil_div(params, 32);
  return params;
}

Wide tokens_per_rank(const Scenario& s) {
  return Wide{s.training.seq_len} * s.training.micro_batch / s.parallel.cp;
}

Term layer_activations(const Scenario& s, bool moe_layer, bool explain, LayerMixer mixer,
                       bool has_mlp) {
  const Dims d = dims_of(s);
  if (s.training.recompute ==
      Recompute::kSelectiveOp)  // scenario_checks.cc: dense, standard attention
    return op_level_checkpointed_layer(s, d, explain);
  SumBuilder sum(explain);
  const bool frozen = lora_frozen_layer(s, moe_layer);
  NormKeeps keeps = residual_norm_keeps(s);
  if (frozen) keeps.per_value -= norm_weight_part(s);
  const std::string norm_expr =
      keeps.per_token == 0
          ? std::string("norms·n·h·B/t_sp")
          : fmt::format("norms·n·(h·{}+{})/t_sp",
                        frozen ? std::to_string(static_cast<int64_t>(keeps.per_value))
                               : std::string(keeps.expr),
                        keeps.per_token);
  sum.add(frozen ? "norm inputs (frozen weights)" : "norm inputs", norm_expr.c_str(),
          Wide{s.model.norms_per_layer} * d.n * (d.h * keeps.per_value + keeps.per_token) / d.t_sp);
  if (mixer == LayerMixer::kMamba2) {
    add_mamba2_mixer(s, d, sum);
  } else if (mixer == LayerMixer::kGatedDeltaNet) {
    add_deltanet_mixer(s, d, sum);
  } else if (mixer == LayerMixer::kAttention || mixer == LayerMixer::kCrossAttention) {
    // Llama-3.2-Vision's cross-attention layers are counted like self-attention over the text
    // tokens (their keys are the image tokens: a bound, not the exact score size).
    if (s.model.attention == AttentionKind::kMla) {
      add_mla_attention(s, d, frozen, sum);
    } else {
      add_standard_attention(s, d, frozen, sum);
    }
    add_attention_core(s, d, sum);
    // Falcon-H1 runs a Mamba-2 mixer beside attention on the same normed input.
    if (s.model.parallel_mamba && mixer == LayerMixer::kAttention) add_mamba2_mixer(s, d, sum);
  }
  if (s.training.dropout) sum.add("dropout masks", "2·n·h/t_sp", 2 * d.n * d.h / d.t_sp);
  if (!has_mlp) return sum.finish(preamble(s, d));
  if (moe_layer) {
    add_moe(s, d, lora_frozen_experts(s), sum);
  } else {
    add_dense_mlp(s, d, frozen, sum);
  }
  return sum.finish(preamble(s, d));
}

Term recomputed_layer_input(const Scenario& s, bool explain) {
  const Dims d = dims_of(s);
  Term term{d.n * d.h * d.bytes / d.t_sp, ""};
  if (explain)
    term.formula =
        fmt::format("layer input n·h·B/t_sp = {}·{}·{}/{}", group_digits(d.n), group_digits(d.h),
                    static_cast<int64_t>(d.bytes), static_cast<int64_t>(d.t_sp));
  return term;
}

Term embedding_activations(const Scenario& s, bool explain) {
  const Dims d = dims_of(s);
  SumBuilder sum(explain);
  if (s.training.dropout) sum.add("embedding dropout mask", "n·h/t_sp", d.n * d.h / d.t_sp);
  return sum.finish(preamble(s, d));
}

Term head_activations(const Scenario& s, bool explain) {
  const Dims d = dims_of(s);
  SumBuilder sum(explain);
  // LoRA freezes the final norm and the LM head: neither keeps what only its weight needs.
  const bool frozen = lora_frozen_base(s);
  NormKeeps keeps = residual_norm_keeps(s);
  if (frozen) keeps.per_value -= norm_weight_part(s);
  const std::string norm_expr =
      keeps.per_token == 0
          ? std::string("n·h·B/t_sp")
          : fmt::format("n·(h·{}+{})/t_sp",
                        frozen ? std::to_string(static_cast<int64_t>(keeps.per_value))
                               : std::string(keeps.expr),
                        keeps.per_token);
  sum.add("final-norm input", norm_expr.c_str(),
          d.n * (d.h * keeps.per_value + keeps.per_token) / d.t_sp);
  if (!frozen) sum.add("LM-head input", d.in_expr, d.n * d.h * d.bytes / d.t_in);
  return sum.finish(preamble(s, d));
}

}  // namespace vramplan
