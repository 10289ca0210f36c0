#include "perf/roofline_ops.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "vramplan/model/precision.h"

namespace vramplan {
namespace {

double bytes_per_element(DType t) { return static_cast<double>(bits_of(t)) / 8.0; }

// A GEMM [m×k]·[k×n] repeated `gemms` times (the local experts of a grouped GEMM). Backward is
// the input gradient (dY·Wᵀ: reads dY and W, writes dX) plus the weight gradient (Xᵀ·dY: reads X
// and dY, writes dW, read-modify-write in fp32 when gradients accumulate there).
OpCost matmul(const char* name, const char* formula, double m, double k, double n, const OpDims& d,
              double gemms = 1) {
  OpCost op;
  op.name = name;
  op.formula = formula;
  op.kind = gemms > 1 ? OpKind::kGroupedMatmul : OpKind::kMatmul;
  const double flops = 2 * m * n * k * gemms;
  const double input = m * k * d.act_bytes, weight = k * n * d.param_bytes;
  const double output = m * n * d.act_bytes;
  op.fwd_flops = op.model_flops = flops;
  op.fwd_bytes = gemms * (input + weight + output);
  op.bwd_flops = 2 * flops;
  op.bwd_bytes = gemms * ((output + weight + input) + (input + output + k * n * d.wgrad_bytes));
  op.gemm_m = m;
  op.gemm_n = n;
  op.gemm_k = k;
  op.gemms = gemms;
  return op;
}

// A linear whose input the norm before it writes (LayerNormLinear in Transformer Engine).
OpCost from_norm(OpCost op) {
  op.input_from_norm = true;
  return op;
}

// An element-wise operation over `elements` values per pass: `reads`/`writes` tensors of that
// size forward, `bwd_reads`/`bwd_writes` backward, `flops_per` FLOPs per value forward.
OpCost elementwise(const char* name, const char* formula, double elements, double fwd_tensors,
                   double bwd_tensors, double flops_per, const OpDims& d) {
  OpCost op;
  op.name = name;
  op.formula = formula;
  op.kind = OpKind::kMemory;
  op.fwd_flops = flops_per * elements;
  op.bwd_flops = 2 * flops_per * elements;
  op.fwd_bytes = fwd_tensors * elements * d.act_bytes;
  op.bwd_bytes = bwd_tensors * elements * d.act_bytes;
  return op;
}

// Hugging Face transformers' eager element-wise code (model_code transformers) with 16-bit
// activations moves far more bytes than one fused kernel per operation: its ATen ops, counted on
// fake tensors (one layer against two) and read in modeling_llama.py, give per element
//   RMSNorm (to fp32, pow, mean, add, rsqrt, mul, to bf16, mul): 36 B forward, 96 B backward;
//   apply_rotary_pos_emb on q and k (mul, neg, cat, mul, add): 20 B forward, 22 B backward;
//   act_fn(gate) * up: 10 B forward, 18 B backward per f-element;
//   the loss (logits.float(), log_softmax, nll): 18 B forward, 38 B backward per logit.
// Kernel counts stay as modelled: the fitted CPU cost is per modelled launch (docs/roofline.md).
struct EagerBytes {
  double fwd, bwd;
};
constexpr EagerBytes kEagerRmsNorm{36, 96}, kEagerRotary{20, 22}, kEagerGatedActivation{10, 18},
    kEagerLoss{18, 38};

bool eager_transformers(const Scenario& s, const OpDims& d) {
  return s.conventions.model_code == ModelCode::kTransformers && d.act_bytes == 2;
}

// Key/value heads on one TP rank: grouped heads are replicated when there are fewer than t.
double kv_heads_per_rank(const ModelConfig& m, const OpDims& d) {
  return std::max(static_cast<double>(m.num_kv_heads) / d.tp, 1.0);
}

void add_norms(const Scenario& s, const OpDims& d, OpList& out) {
  const ModelConfig& m = s.model;
  // Each norm reads its input and writes its output (3 tensors backward: x, dy -> dx); each of
  // the two residual adds reads two tensors and writes one, forward and backward.
  const double norms = static_cast<double>(m.norms_per_layer);
  OpCost op = elementwise("norms + residual adds", "≈(4·norms+2)·n·h/t_sp",
                          d.tokens * m.hidden / d.tp_sp, 2 * norms + 6, 3 * norms + 6, 0, d);
  op.fwd_flops = (4 * norms + 2) * d.tokens * m.hidden / d.tp_sp;
  op.bwd_flops = 2 * op.fwd_flops;
  op.kernels = norms + 2;
  const bool eager = eager_transformers(s, d);
  if (eager) {
    const double elements = d.tokens * m.hidden / d.tp_sp;
    op.fwd_bytes += norms * elements * (kEagerRmsNorm.fwd - 2 * d.act_bytes);
    op.bwd_bytes += norms * elements * (kEagerRmsNorm.bwd - 3 * d.act_bytes);
  }
  double extra = 0;  // per-head q/k norms (TP-sharded) and MLA's latent norms (replicated)
  if (m.qk_norm || m.qk_norm_full_width) {
    extra += d.tokens * (m.num_heads / d.tp + kv_heads_per_rank(m, d)) * m.head_dim;
    op.kernels += 2;
  }
  if (m.attention == AttentionKind::kMla) {
    extra += d.tokens * (m.mla.q_lora_rank + m.mla.kv_lora_rank);
    op.kernels += m.mla.q_lora_rank > 0 ? 2 : 1;
  }
  op.fwd_bytes += extra * (eager ? kEagerRmsNorm.fwd : 2 * d.act_bytes);
  op.bwd_bytes += extra * (eager ? kEagerRmsNorm.bwd : 3 * d.act_bytes);
  op.fwd_flops += 4 * extra;
  op.bwd_flops += 8 * extra;
  out.add(op);
}

void add_standard_projections(const Scenario& s, const OpDims& d, OpList& out) {
  const ModelConfig& m = s.model;
  const double q_heads = m.num_heads / d.tp, kv_heads = kv_heads_per_rank(m, d);
  out.add(from_norm(matmul("QKV projection", "2·n·h·(a+2g)·d/t", d.tokens, m.hidden,
                           (q_heads + 2 * kv_heads) * m.head_dim, d)));
  // Fused kernels apply the rotary embedding inside the QKV epilogue or attention; transformers'
  // eager apply_rotary_pos_emb is its own traffic over q and k.
  if (eager_transformers(s, d) && !m.learned_position_embeddings) {
    const double elements = d.tokens * (q_heads + kv_heads) * m.head_dim;
    OpCost rotary =
        elementwise("rotary embedding (eager)", "≈20 B·n·(a+g)·d/t", elements, 0, 0, 3, d);
    rotary.fwd_bytes = elements * kEagerRotary.fwd;
    rotary.bwd_bytes = elements * kEagerRotary.bwd;
    out.add(rotary);
  }
}

// MLA's low-rank down-projections are replicated on every TP rank; the up-projections are split.
// In Megatron's layer spec the input norm stays separate from the down-projections, and the
// latent norms are fused into the up-projections (column_parallel_layer_norm_linear), which is
// what from_norm marks for the fp8 casts.
void add_mla_projections(const Scenario& s, const OpDims& d, OpList& out) {
  const ModelConfig& m = s.model;
  const MlaConfig& mla = m.mla;
  const double q_heads = m.num_heads / d.tp;
  const double qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  if (mla.q_lora_rank > 0) {
    out.add(
        matmul("MLA q down-projection", "2·n·h·q_lora", d.tokens, m.hidden, mla.q_lora_rank, d));
    out.add(from_norm(matmul("MLA q up-projection", "2·n·q_lora·a·(nope+rope)/t", d.tokens,
                             mla.q_lora_rank, q_heads * qk, d)));
  } else {
    out.add(
        matmul("MLA q projection", "2·n·h·a·(nope+rope)/t", d.tokens, m.hidden, q_heads * qk, d));
  }
  out.add(matmul("MLA kv down-projection", "2·n·h·(kv_lora+rope)", d.tokens, m.hidden,
                 mla.kv_lora_rank + mla.qk_rope_head_dim, d));
  out.add(
      from_norm(matmul("MLA kv up-projection", "2·n·kv_lora·a·(nope+v)/t", d.tokens,
                       mla.kv_lora_rank, q_heads * (mla.qk_nope_head_dim + mla.v_head_dim), d)));
}

struct HeadDims {
  double q_heads, kv_heads, qk, v;
};

HeadDims head_dims(const ModelConfig& m, const OpDims& d) {
  if (m.attention == AttentionKind::kMla) {
    const double q_heads = m.num_heads / d.tp;  // MLA expands K and V per query head
    return {q_heads, q_heads, static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim),
            static_cast<double>(m.mla.v_head_dim)};
  }
  return {m.num_heads / d.tp, kv_heads_per_rank(m, d), static_cast<double>(m.head_dim),
          static_cast<double>(m.head_dim)};
}

// Query rows per tile of the flash-attention kernels on Hopper and Blackwell (FlashAttention-2/3,
// cuDNN's fused attention): one thread block per 128 queries of one head.
constexpr double kAttentionTileRows = 128;
// Attention's rate by head dimension relative to d = 128, measured with cuDNN attention
// (PyTorch's and Transformer Engine's default on Hopper) on an H100, forward + backward, 16-64
// heads, s = 8,192-16,384 (reference/gpu_runs/h100-2026-11-27-shapes-dims.jsonl): below 128
// the softmax's fixed work per score weighs more, above it the kernel's tiles shrink to fit its
// registers. Linear between the measured dimensions, flat beyond them.
double attention_dim_scale(double head_dim) {
  constexpr double kDims[] = {64, 96, 128, 192, 256};
  constexpr double kRate[] = {0.77, 0.79, 1.0, 0.69, 0.81};
  constexpr int kLast = static_cast<int>(std::size(kDims)) - 1;
  if (head_dim <= kDims[0]) return kRate[0];
  if (head_dim >= kDims[kLast]) return kRate[kLast];
  int i = 0;
  while (head_dim > kDims[i + 1]) ++i;
  const double t = (head_dim - kDims[i]) / (kDims[i + 1] - kDims[i]);
  return kRate[i] + t * (kRate[i + 1] - kRate[i]);
}

void add_attention_core(const Scenario& s, const OpDims& d, bool sliding, OpList& out) {
  const ModelConfig& m = s.model;
  const bool flash = s.training.flash_attention;
  const HeadDims h = head_dims(m, d);
  OpCost op;
  op.name = flash ? "attention (flash)" : "attention (unfused)";
  op.formula =
      flash ? "2·n·s_kv·a·(d_qk+d_v)/t, causal: s_kv = s/2" : "2·n·s_kv·a·(d_qk+d_v)/t, s_kv = s";
  op.kind = OpKind::kAttention;
  op.selective = true;
  // Unfused attention computes the masked half too; flash attention skips it.
  const double keys = attended_keys(s, sliding, flash);
  op.fwd_flops = 2 * d.tokens * keys * h.q_heads * (h.qk + h.v);
  op.model_flops = 2 * d.tokens * attended_keys(s, sliding, false) * h.q_heads * (h.qk + h.v);
  // Keys and values this rank reads: the whole sequence (context-parallel ranks exchange them),
  // or its own chunk plus the window for sliding layers.
  const double window = sliding && m.sliding_window > 0 ? m.sliding_window : d.seq;
  const double kv_tokens = d.micro_batch * std::min(d.seq, d.tokens / d.micro_batch + window);
  const double q = d.tokens * h.q_heads * h.qk * d.act_bytes;
  const double kv = kv_tokens * h.kv_heads * (h.qk + h.v) * d.act_bytes;
  const double o = d.tokens * h.q_heads * h.v * d.act_bytes;
  const double stats = d.tokens * h.q_heads * 4;  // fp32 log-sum-exp per query and head
  op.fwd_bytes = q + kv + o + stats;
  op.bwd_bytes = 2 * q + 2 * kv + 2 * o + stats;  // reads q, kv, o, dO; writes dq, dkv
  op.bwd_flops = (flash ? 2.5 : 2.0) * op.fwd_flops;
  // Tiles of 128 queries per head and sequence run in parallel. Under a causal mask over the
  // whole sequence the last tile attends to every key, twice the average: it bounds the kernel
  // when the tiles are too few to keep every SM busy (step_time_sections.cc).
  const double queries = d.tokens / std::max(d.micro_batch, 1.0);
  const bool whole_causal = flash && !(sliding && m.sliding_window > 0 && m.sliding_window < d.seq);
  op.attention_tiles = d.micro_batch * h.q_heads * std::ceil(queries / kAttentionTileRows) /
                       (whole_causal ? 2.0 : 1.0);
  op.attention_scale = attention_dim_scale((h.qk + h.v) / 2);
  if (!flash) {
    // The s×s scores: written, softmaxed in place (read + write), read by the value product.
    const double scores = d.tokens * keys * h.q_heads * d.act_bytes;
    op.fwd_bytes += 4 * scores;
    op.bwd_bytes += 6 * scores;
  }
  out.add(op);
}

void add_output_projection(const Scenario& s, const OpDims& d, OpList& out) {
  const ModelConfig& m = s.model;
  const HeadDims h = head_dims(m, d);
  out.add(matmul("output projection", "2·n·a·d_v·h/t", d.tokens, h.q_heads * h.v, m.hidden, d));
}

// Gate+up, activation and down of a (gated or plain) MLP of width `width` on `tokens` tokens.
void add_mlp(const Scenario& s, const OpDims& d, double width, bool shared, OpList& out) {
  const bool gated = s.model.mlp == MlpKind::kGated;
  const double h = s.model.hidden, f = width / d.tp;
  if (gated) {
    // Megatron fuses the pre-MLP norm into a dense model's gate+up (LayerNormLinear); a model
    // with experts keeps that norm separate, also in its dense layers, since the router and the
    // shared experts read it too (gpt_layer_specs.py).
    OpCost up = matmul(shared ? "shared experts gate+up" : "MLP gate+up projection",
                       shared ? "2·n·h·2·S·f_s/t" : "2·n·h·2f/t", d.tokens, h, 2 * f, d);
    out.add(shared || s.model.moe.num_experts > 0 ? up : from_norm(up));
  } else {
    out.add(matmul(shared ? "shared experts up" : "MLP up projection",
                   shared ? "2·n·h·S·f_s/t" : "2·n·h·f/t", d.tokens, h, f, d));
  }
  // SwiGLU reads gate and up and writes their product (backward: 3 reads, 2 writes); GeLU reads
  // one and writes one (backward: 2 reads, 1 write).
  OpCost activation = elementwise(shared ? "shared experts activation" : "MLP activation",
                                  gated ? "≈5·n·f/t" : "≈8·n·f/t", d.tokens * f, gated ? 3 : 2,
                                  gated ? 5 : 3, gated ? 5 : 8, d);
  if (gated && eager_transformers(s, d)) {
    activation.fwd_bytes = d.tokens * f * kEagerGatedActivation.fwd;
    activation.bwd_bytes = d.tokens * f * kEagerGatedActivation.bwd;
  }
  out.add(activation);
  out.add(matmul(shared ? "shared experts down" : "MLP down projection",
                 shared ? "2·n·S·f_s·h/t" : "2·n·f·h/t", d.tokens, f, h, d));
}

void add_moe(const Scenario& s, const OpDims& d, OpList& out) {
  const ModelConfig& m = s.model;
  const MoeConfig& moe = m.moe;
  const double h = m.hidden, local_tokens = d.tokens / d.tp_sp;
  OpCost router = matmul("router", "2·n·h·E/t_sp", local_tokens, h, moe.num_experts, d);
  router.fp8_linear = false;  // the router stays in bf16 (fp32 with --moe-router-dtype)
  const double scores = local_tokens * moe.num_experts * 4;  // fp32 softmax/top-k over E
  router.fwd_bytes += 3 * scores;
  router.bwd_bytes += 3 * scores;
  router.kernels = 3;  // the GEMM, softmax and top-k
  out.add(router);
  // Token copies processed on this GPU: every token goes to k experts; EP balances them over the
  // expert group; expert-TP ranks all see the tokens of their etp group (as in activations.cc).
  const double routed = d.tokens * moe.top_k * d.etp / d.tp_sp;
  const double local_experts = moe.num_experts / d.ep;
  const double per_expert = routed / local_experts;
  const double passes = local_experts > 1 ? 6 : 4;
  OpCost permute =
      elementwise("token permute + unpermute", "≈2·n·k·h/t_sp", routed * h, passes, passes, 0, d);
  permute.fwd_bytes += 2 * local_tokens * h * d.act_bytes;  // the layer's own input and output
  permute.bwd_bytes += 2 * local_tokens * h * d.act_bytes;
  permute.fwd_flops = 2 * routed * h;  // the gate-weighted sum of expert outputs
  permute.bwd_flops = 4 * routed * h;
  permute.kernels = 2;
  permute.dynamic_shape = true;
  out.add(permute);
  const bool gated = m.mlp == MlpKind::kGated;
  const double f = moe.expert_ffn / d.etp;
  OpCost up =
      matmul("routed experts gate+up (grouped)", gated ? "2·n·k·h·2f_e/t_sp" : "2·n·k·h·f_e/t_sp",
             per_expert, h, gated ? 2 * f : f, d, local_experts);
  up.dynamic_shape = true;
  out.add(up);
  OpCost activation =
      elementwise("routed experts activation", gated ? "≈5·n·k·f_e/t_sp" : "≈8·n·k·f_e/t_sp",
                  routed * f, gated ? 3 : 2, gated ? 5 : 3, gated ? 5 : 8, d);
  if (gated && eager_transformers(s, d)) {
    activation.fwd_bytes = routed * f * kEagerGatedActivation.fwd;
    activation.bwd_bytes = routed * f * kEagerGatedActivation.bwd;
  }
  activation.dynamic_shape = true;
  out.add(activation);
  OpCost down = matmul("routed experts down (grouped)", "2·n·k·f_e·h/t_sp", per_expert, f, h, d,
                       local_experts);
  down.dynamic_shape = true;
  out.add(down);
  if (moe.shared_experts > 0)
    add_mlp(s, d, static_cast<double>(moe.shared_experts) * moe.shared_expert_ffn, true, out);
}

// Transformer Engine's fp8 linears quantize what their GEMMs read (docs/fp8.md): forward, the
// input, in one cast-transpose kernel that reads the 16-bit values and writes a row-wise fp8
// copy and a column-wise one for the weight-gradient GEMM, unless the norm before the linear
// writes fp8 itself (LayerNormLinear: QKV, a dense model's gate+up, MLA's up-projections:
// input_from_norm); backward, the output
// gradient, the same way, for the input- and weight-gradient GEMMs. The router stays in bf16.
// Kernel counts stay as modelled: TE launches the casts from inside the linear's own call, and
// the fitted CPU cost is per modelled launch (docs/roofline.md).
void add_fp8_casts(const OpDims& d, int first, OpList& out) {
  const double per_value = d.act_bytes + 2 * d.fp8_value_bytes;
  for (int i = first; i < out.count; ++i) {
    OpCost& op = out.ops[i];
    if (op.kind != OpKind::kMatmul && op.kind != OpKind::kGroupedMatmul) continue;
    if (!op.fp8_linear) continue;
    const double gemms = std::max(op.gemms, 1.0);
    if (!op.input_from_norm) op.fwd_bytes += op.gemm_m * op.gemm_k * gemms * per_value;
    op.bwd_bytes += op.gemm_m * op.gemm_n * gemms * per_value;
  }
}

}  // namespace

OpDims op_dims(const Scenario& s) {
  const Parallelism& p = s.parallel;
  const Training& tr = s.training;
  OpDims d;
  d.seq = static_cast<double>(tr.seq_len);
  d.micro_batch = static_cast<double>(tr.micro_batch);
  d.tokens = d.seq * d.micro_batch / static_cast<double>(p.cp);
  d.tp = static_cast<double>(p.tp);
  d.tp_sp = (p.sequence_parallel && p.tp > 1) ? d.tp : 1.0;
  d.ep = static_cast<double>(p.ep);
  d.etp = static_cast<double>(p.etp);
  d.act_bytes = bytes_per_element(tr.activation_dtype);
  // GEMMs read weights in the compute dtype: fp8 training keeps fp8 copies of the weights.
  d.param_bytes = std::min(bytes_per_element(tr.param_dtype), d.act_bytes);
  d.wgrad_bytes = tr.fp32_grad_accumulation ? 8.0 : bytes_per_element(tr.grad_dtype);
  d.vocab = static_cast<double>(padded_vocab(s));
  if (tr.fp8 != Fp8Recipe::kNone) d.fp8_value_bytes = has_block_scales(tr.fp8) ? 1 + 1.0 / 32 : 1;
  return d;
}

DType attention_dtype(DType activation) {
  return (activation == DType::kFp8 || activation == DType::kFp4) ? DType::kBf16 : activation;
}

double attended_keys(const Scenario& s, bool sliding, bool causal) {
  const double seq = static_cast<double>(s.training.seq_len);
  const double window = (sliding && s.model.sliding_window > 0)
                            ? std::min(static_cast<double>(s.model.sliding_window), seq)
                            : seq;
  // Query i attends min(i, w) keys under the mask: on average w − w²/(2s) (s/2 when w = s).
  return causal ? window - window * window / (2 * seq) : window;
}

void layer_ops(const Scenario& s, const OpDims& d, LayerKind kind, OpList& out) {
  const int first = out.count;
  add_norms(s, d, out);
  if (s.model.attention == AttentionKind::kMla) {
    add_mla_projections(s, d, out);
  } else {
    add_standard_projections(s, d, out);
  }
  add_attention_core(s, d, kind.sliding, out);
  add_output_projection(s, d, out);
  if (kind.moe) {
    add_moe(s, d, out);
  } else {
    add_mlp(s, d, static_cast<double>(s.model.ffn), false, out);
  }
  if (d.fp8_value_bytes > 0) add_fp8_casts(d, first, out);
}

void embedding_ops(const Scenario& s, const OpDims& d, OpList& out) {
  // Vocabulary-parallel lookup: each TP rank writes all n rows (zeros outside its shard) before
  // they are summed; backward scatter-adds into the fp32 gradient (read + write).
  const double elements = d.tokens * s.model.hidden;
  OpCost op = elementwise("embedding lookup", "0 (gather)", elements, 2, 1, 0, d);
  op.bwd_bytes += elements * 8;
  op.bwd_flops = elements;
  out.add(op);
}

void head_ops(const Scenario& s, const OpDims& d, OpList& out) {
  const double h = s.model.hidden;
  const bool eager = eager_transformers(s, d);
  if (s.model.final_norm) {
    OpCost norm = elementwise("final norm", "≈4·n·h/t_sp", d.tokens * h / d.tp_sp, 2, 3, 4, d);
    if (eager) {
      norm.fwd_bytes = d.tokens * h / d.tp_sp * kEagerRmsNorm.fwd;
      norm.bwd_bytes = d.tokens * h / d.tp_sp * kEagerRmsNorm.bwd;
    }
    out.add(norm);
  }
  out.add(matmul("LM head", "2·n·h·V/t", d.tokens, h, d.vocab / d.tp, d));
  // Cross-entropy over the vocabulary shard: reads the logits and writes what the framework's
  // loss keeps per logit (Conventions::loss_bytes_per_logit); backward reads the fp32
  // probabilities and writes the logits' gradient.
  const double logits = d.tokens * d.vocab / d.tp;
  OpCost loss = elementwise("cross-entropy loss", "≈5·n·V/t", logits, 0, 0, 5, d);
  loss.fwd_bytes =
      logits * (eager ? kEagerLoss.fwd : d.act_bytes + s.conventions.loss_bytes_per_logit);
  loss.bwd_bytes = logits * (eager ? kEagerLoss.bwd : 4 + d.act_bytes);
  loss.kernels = 3;  // max, exp-sum and the normalised log-probability
  out.add(loss);
}

void mtp_extra_ops(const Scenario& s, const OpDims& d, OpList& out) {
  const double h = s.model.hidden;
  out.add(elementwise("MTP norms", "≈8·n·h/t_sp", 2 * d.tokens * h / d.tp_sp, 2, 3, 4, d));
  out.add(matmul("MTP projection", "2·n·2h·h/t", d.tokens, 2 * h, h / d.tp, d));
  head_ops(s, d, out);
}

}  // namespace vramplan
