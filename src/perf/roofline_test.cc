#include "vramplan/perf/roofline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "model/test_models.h"
#include "perf/roofline_ops.h"
#include "vramplan/model/params.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/report/roofline_report.h"

namespace vramplan {
namespace {

Scenario llama8b() {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = 4096;
  return s;
}

const OpCost& find_op(const OpList& ops, const std::string& name) {
  for (int i = 0; i < ops.count; ++i)
    if (name == ops.ops[i].name) return ops.ops[i];
  ADD_FAILURE() << "no operation " << name;
  return ops.ops[0];
}

OpList dense_layer(const Scenario& s) {
  OpList ops;
  layer_ops(s, op_dims(s), LayerKind{}, ops);
  return ops;
}

const Gpu& h100() { return *builtin_gpus().find("h100-80gb"); }

// Every weight of a layer is used once per token in a GEMM: 2 FLOPs per weight per token
// forward, so the layer's matmul FLOPs are 2·n·(its attention + MLP weights), the 6·N rule's
// forward third.
TEST(RooflineOps, MatmulFlopsAreTwiceTheWeightsPerToken) {
  const Scenario s = llama8b();
  const OpList ops = dense_layer(s);
  double matmul = 0;
  for (int i = 0; i < ops.count; ++i)
    if (ops.ops[i].kind == OpKind::kMatmul) matmul += ops.ops[i].fwd_flops;
  const ParamCounts counts = count_parameters(s.model);
  const LayerParams& layer = counts.layers[0];
  EXPECT_DOUBLE_EQ(matmul, 2.0 * 4096 * static_cast<double>(layer.attention + layer.mlp));
  // By hand: QKV 2·n·h·(a+2g)·d = 2·4096·4096·(32+16)·128.
  EXPECT_DOUBLE_EQ(find_op(ops, "QKV projection").fwd_flops, 2.0 * 4096 * 4096 * 48 * 128);
  EXPECT_DOUBLE_EQ(find_op(ops, "MLP gate+up projection").fwd_flops, 2.0 * 4096 * 4096 * 2 * 14336);
}

// Attention: 4·n·s·h per layer without the mask (model FLOPs), half of it executed causally.
TEST(RooflineOps, AttentionFlopsAndCausalHalving) {
  const Scenario s = llama8b();
  const OpList flash_ops = dense_layer(s);
  const OpCost& attention = find_op(flash_ops, "attention (flash)");
  EXPECT_DOUBLE_EQ(attention.model_flops, 4.0 * 4096 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(attention.fwd_flops, 2.0 * 4096 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(attention.bwd_flops, 2.5 * attention.fwd_flops);  // recomputes the scores
  Scenario unfused = s;
  unfused.training.flash_attention = false;
  const OpList unfused_ops = dense_layer(unfused);
  const OpCost& plain = find_op(unfused_ops, "attention (unfused)");
  EXPECT_DOUBLE_EQ(plain.fwd_flops, plain.model_flops);  // computes the masked half too
  // The s×s scores written, softmaxed in place and read again: 4 passes of n·s·a values.
  EXPECT_DOUBLE_EQ(plain.fwd_bytes, attention.fwd_bytes + 4 * 4096.0 * 4096 * 32 * 2);
}

TEST(RooflineOps, SlidingWindowAttendsTheWindow) {
  Scenario s = llama8b();
  s.model.sliding_window = 1024;
  // Query i attends min(i, w) keys: on average w − w²/(2s).
  EXPECT_DOUBLE_EQ(attended_keys(s, true, true), 1024 - 1024.0 * 1024 / (2 * 4096));
  EXPECT_DOUBLE_EQ(attended_keys(s, true, false), 1024);
  EXPECT_DOUBLE_EQ(attended_keys(s, false, true), 2048);
}

TEST(RooflineOps, MatmulBackwardIsTwiceForward) {
  const OpList ops = dense_layer(llama8b());
  for (int i = 0; i < ops.count; ++i) {
    if (ops.ops[i].kind != OpKind::kMatmul) continue;
    EXPECT_DOUBLE_EQ(ops.ops[i].bwd_flops, 2 * ops.ops[i].fwd_flops) << ops.ops[i].name;
  }
}

// Bytes of a GEMM: input + weights + output in their dtypes.
TEST(RooflineOps, MatmulBytesAreInputsWeightsOutputs) {
  const OpList ops = dense_layer(llama8b());
  const OpCost& down = find_op(ops, "MLP down projection");
  EXPECT_DOUBLE_EQ(down.fwd_bytes, 2.0 * (4096.0 * 14336 + 14336.0 * 4096 + 4096.0 * 4096));
}

TEST(RooflineOps, TensorParallelismDividesShardedWorkAndSequenceParallelTheRest) {
  const Scenario one = llama8b();
  Scenario four = one;
  four.parallel.tp = 4;
  const OpList a = dense_layer(one), b = dense_layer(four);
  for (const char* name : {"QKV projection", "attention (flash)", "output projection",
                           "MLP gate+up projection", "MLP down projection", "MLP activation"})
    EXPECT_DOUBLE_EQ(find_op(b, name).fwd_flops * 4, find_op(a, name).fwd_flops) << name;
  // With SP the norms work on a quarter of the sequence; without it every rank does all of it.
  EXPECT_DOUBLE_EQ(find_op(b, "norms + residual adds").fwd_bytes * 4,
                   find_op(a, "norms + residual adds").fwd_bytes);
  four.parallel.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(find_op(dense_layer(four), "norms + residual adds").fwd_bytes,
                   find_op(a, "norms + residual adds").fwd_bytes);
}

TEST(RooflineOps, ContextParallelismDividesTokens) {
  Scenario two = llama8b();
  two.parallel.cp = 2;
  const OpList a = dense_layer(llama8b()), b = dense_layer(two);
  EXPECT_DOUBLE_EQ(find_op(b, "QKV projection").fwd_flops * 2,
                   find_op(a, "QKV projection").fwd_flops);
  // Each rank's half of the queries still attends the whole sequence.
  EXPECT_DOUBLE_EQ(find_op(b, "attention (flash)").fwd_flops * 2,
                   find_op(a, "attention (flash)").fwd_flops);
}

// Routed experts: every token visits k of the E experts; with EP each GPU holds E/ep of them and,
// balanced, receives as many token copies as it sends (n·k), run as one grouped GEMM.
TEST(RooflineOps, RoutedExpertsAsGroupedGemms) {
  Scenario s;
  s.model = testing::tiny_moe();
  s.training.seq_len = 1024;
  s.parallel.ep = 2;
  s.parallel.dp = 2;
  OpList ops;
  layer_ops(s, op_dims(s), LayerKind{true, false}, ops);
  const OpCost& up = find_op(ops, "routed experts gate+up (grouped)");
  EXPECT_EQ(up.kind, OpKind::kGroupedMatmul);
  EXPECT_DOUBLE_EQ(up.gemms, 4);                // 8 experts over ep = 2
  EXPECT_DOUBLE_EQ(up.gemm_m, 1024.0 * 2 / 4);  // n·k tokens over the 4 local experts
  EXPECT_DOUBLE_EQ(up.fwd_flops, 2.0 * 1024 * 2 * 64 * 2 * 32);
  EXPECT_DOUBLE_EQ(find_op(ops, "router").fwd_flops, 2.0 * 1024 * 64 * 8);
}

// Attention's parallel tiles: 128 queries of one head each, counted in units of the longest
// (twice the average under a causal mask over the whole sequence), and the head dimension's
// rate relative to d = 128 (measured with cuDNN, interpolated between the measured dimensions).
TEST(RooflineOps, AttentionTilesAndHeadDimScale) {
  Scenario s = llama8b();  // 32 heads of 128, s = 4,096
  s.training.micro_batch = 2;
  // Copies: each list is a temporary.
  const OpCost attention = find_op(dense_layer(s), "attention (flash)");
  EXPECT_DOUBLE_EQ(attention.attention_tiles, 2 * 32 * (4096 / 128) / 2.0);
  EXPECT_DOUBLE_EQ(attention.attention_scale, 1);
  s.parallel.tp = 8;  // 4 heads per GPU
  s.parallel.dp = 1;
  EXPECT_DOUBLE_EQ(find_op(dense_layer(s), "attention (flash)").attention_tiles, 2 * 4 * 32 / 2.0);
  Scenario small = llama8b();
  small.model.head_dim = 64;
  const double scale = find_op(dense_layer(small), "attention (flash)").attention_scale;
  EXPECT_DOUBLE_EQ(scale, 0.77);  // measured: d = 64 against 128
  Scenario mla_like = llama8b();
  mla_like.model.head_dim = 160;  // halfway between the measured 128 and 192
  EXPECT_NEAR(find_op(dense_layer(mla_like), "attention (flash)").attention_scale, (1.0 + 0.69) / 2,
              1e-12);
  Scenario windowed = llama8b();
  windowed.model.sliding_window = 1024;  // the longest tile attends the window: no halving
  OpList ops;
  layer_ops(windowed, op_dims(windowed), LayerKind{false, true}, ops);
  EXPECT_DOUBLE_EQ(find_op(ops, "attention (flash)").attention_tiles, 32 * 32);
}

// Megatron's all-to-all dispatcher (token_dispatcher.py) permutes the routed copies, sorts them
// by local expert after the all-to-all, and undoes both on the way back: 6 passes over the
// routed copies with several local experts, 4 with one.
TEST(RooflineOps, TokenPermutationPasses) {
  Scenario s;
  s.model = testing::tiny_moe();  // 8 experts, top 2, h = 64
  s.training.seq_len = 1024;
  s.parallel.ep = 2;
  s.parallel.dp = 2;
  OpList ops;
  layer_ops(s, op_dims(s), LayerKind{true, false}, ops);
  const double routed = 1024.0 * 2 * 64 * 2;  // n·k·h elements of 2 bytes
  const double own = 2 * 1024.0 * 64 * 2;     // the layer's input and output
  EXPECT_DOUBLE_EQ(find_op(ops, "token permute + unpermute").fwd_bytes, 6 * routed + own);
  s.parallel.ep = 8;  // one local expert: no sort by expert
  s.parallel.dp = 8;
  OpList one;
  layer_ops(s, op_dims(s), LayerKind{true, false}, one);
  EXPECT_DOUBLE_EQ(find_op(one, "token permute + unpermute").bwd_bytes, 4 * routed + own);
}

// fp8 linears (Transformer Engine) cast what their GEMMs read: forward the input into a row-wise
// and a column-wise fp8 copy, except where the norm writes fp8 (QKV, a dense MLP's gate+up);
// backward the output gradient. 2 B read + 2 × 1 B written per value with tensorwise scaling.
TEST(RooflineOps, Fp8LinearsCastTheirInputsAndOutputGradients) {
  const Scenario bf16 = llama8b();
  Scenario fp8 = bf16;
  fp8.training.fp8 = Fp8Recipe::kTensorwise;
  const OpList a = dense_layer(bf16), b = dense_layer(fp8);
  const double n = 4096, h = 4096;
  const OpCost &qkv16 = find_op(a, "QKV projection"), &qkv8 = find_op(b, "QKV projection");
  EXPECT_DOUBLE_EQ(qkv8.fwd_bytes, qkv16.fwd_bytes);  // LayerNormLinear writes fp8 itself
  EXPECT_DOUBLE_EQ(qkv8.bwd_bytes, qkv16.bwd_bytes + n * 48 * 128 * 4);
  const OpCost &o16 = find_op(a, "output projection"), &o8 = find_op(b, "output projection");
  EXPECT_DOUBLE_EQ(o8.fwd_bytes, o16.fwd_bytes + n * h * 4);
  EXPECT_DOUBLE_EQ(o8.bwd_bytes, o16.bwd_bytes + n * h * 4);
  EXPECT_DOUBLE_EQ(o8.kernels, o16.kernels);
  // MXFP8 adds an E8M0 scale per 32 values to each fp8 copy.
  fp8.training.fp8 = Fp8Recipe::kMxfp8;
  const OpCost mx = find_op(dense_layer(fp8), "output projection");
  EXPECT_DOUBLE_EQ(mx.fwd_bytes, o16.fwd_bytes + n * h * (2 + 2 * (1 + 1.0 / 32)));
  // A model with experts keeps its pre-MLP norm apart (the router reads it too): its dense
  // layers' gate+up cast their input.
  Scenario moe16;
  moe16.model = testing::tiny_moe();  // h = 64
  moe16.training.seq_len = 1024;
  Scenario moe8 = moe16;
  moe8.training.fp8 = Fp8Recipe::kTensorwise;
  OpList dense16, dense8;
  layer_ops(moe16, op_dims(moe16), LayerKind{}, dense16);
  layer_ops(moe8, op_dims(moe8), LayerKind{}, dense8);
  EXPECT_DOUBLE_EQ(find_op(dense8, "MLP gate+up projection").fwd_bytes,
                   find_op(dense16, "MLP gate+up projection").fwd_bytes + 1024.0 * 64 * 4);
  OpList head16, head8;  // the LM head stays in bf16
  head_ops(bf16, op_dims(bf16), head16);
  head_ops(fp8, op_dims(fp8), head8);
  EXPECT_DOUBLE_EQ(find_op(head8, "LM head").fwd_bytes, find_op(head16, "LM head").fwd_bytes);
}

// transformers' eager element-wise code (model_code transformers, 16-bit activations): its
// RMSNorm moves 36 B per element forward and 96 B backward, its rotary embedding 20/22 B per
// element of q and k, act_fn(gate)·up 10/18 B per f-element and its loss 18/38 B per logit;
// the default code has no rotary pass of its own. GEMMs and FLOPs do not change.
TEST(RooflineOps, TransformersEagerElementwiseBytes) {
  Scenario fused = llama8b();
  Scenario eager = llama8b();
  eager.conventions.model_code = ModelCode::kTransformers;
  const OpDims d = op_dims(eager);
  const double n = d.tokens, h = 4096, f = 14336;
  const OpList plain = dense_layer(fused), hf = dense_layer(eager);
  const OpCost& norms = find_op(hf, "norms + residual adds");
  const OpCost& fused_norms = find_op(plain, "norms + residual adds");
  EXPECT_DOUBLE_EQ(norms.fwd_bytes - fused_norms.fwd_bytes, 2 * n * h * (36 - 2 * 2));
  EXPECT_DOUBLE_EQ(norms.bwd_bytes - fused_norms.bwd_bytes, 2 * n * h * (96 - 3 * 2));
  EXPECT_EQ(norms.kernels, fused_norms.kernels);  // the fitted CPU cost is per modelled launch
  const OpCost& rotary = find_op(hf, "rotary embedding (eager)");
  EXPECT_DOUBLE_EQ(rotary.fwd_bytes, n * (32 + 8) * 128 * 20.0);
  EXPECT_DOUBLE_EQ(rotary.bwd_bytes, n * (32 + 8) * 128 * 22.0);
  EXPECT_EQ(plain.count + 1, hf.count);
  const OpCost& activation = find_op(hf, "MLP activation");
  EXPECT_DOUBLE_EQ(activation.fwd_bytes, n * f * 10);
  EXPECT_DOUBLE_EQ(activation.bwd_bytes, n * f * 18);
  EXPECT_DOUBLE_EQ(find_op(hf, "QKV projection").fwd_flops,
                   find_op(plain, "QKV projection").fwd_flops);
  OpList head;
  head_ops(eager, d, head);
  const double logits = n * d.vocab;
  EXPECT_DOUBLE_EQ(find_op(head, "cross-entropy loss").fwd_bytes, logits * 18);
  EXPECT_DOUBLE_EQ(find_op(head, "cross-entropy loss").bwd_bytes, logits * 38);
  // fp32 activations: no upcasts to count, the generic traffic stays.
  eager.training.activation_dtype = DType::kFp32;
  fused.training.activation_dtype = DType::kFp32;
  EXPECT_EQ(dense_layer(eager).count, dense_layer(fused).count);
}

TEST(Roofline, BoundFollowsTheRidgePoint) {
  Result<Roofline> r = compute_roofline(llama8b(), h100());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_NEAR(r->matmul_ridge, 989.4e12 / 3350e9, 1e-9);
  for (const RooflineSection& section : r->sections)
    for (const RooflineOp& op : section.ops) {
      EXPECT_EQ(op.bound, op.intensity < op.ridge ? Bound::kMemory : Bound::kCompute) << op.op;
      EXPECT_GE(op.roofline_s, 0) << op.op;
    }
  // On a GPU with a thousand times the bandwidth the element-wise ops turn compute-bound.
  Gpu fast = h100();
  fast.hbm_gbps *= 1000;
  Result<Roofline> f = compute_roofline(llama8b(), fast);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->sections[0].ops[0].op, "norms + residual adds");
  EXPECT_EQ(r->sections[0].ops[0].bound, Bound::kMemory);
  EXPECT_EQ(f->sections[0].ops[0].bound, Bound::kCompute);
}

// fp8 training runs the GEMMs at the fp8 peak and keeps attention in bf16.
TEST(Roofline, Fp8GemmsBf16Attention) {
  Scenario s = llama8b();
  s.training.activation_dtype = DType::kFp8;
  Result<Roofline> r = compute_roofline(s, h100());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->matmul_tflops, 1978.9);
  EXPECT_EQ(r->attention_tflops, 989.4);
  for (const RooflineOp& op : r->sections[0].ops)
    EXPECT_EQ(op.ridge, op.kind == "attention"     ? r->attention_ridge
                        : op.kind == "elementwise" ? r->vector_ridge
                                                   : r->matmul_ridge)
        << op.op;
}

TEST(Roofline, SectionsForEachKindOfLayerPlusEmbeddingAndHead) {
  Scenario s;
  s.model = testing::tiny_moe();
  s.training.seq_len = 512;
  Result<Roofline> r = compute_roofline(s, h100());
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->sections.size(), 4u);
  EXPECT_EQ(r->sections[0].name, "dense layer, full attention");
  EXPECT_EQ(r->sections[0].layers, 1);
  EXPECT_EQ(r->sections[1].name, "MoE layer, full attention");
  EXPECT_EQ(r->sections[1].layers, 3);
  EXPECT_EQ(r->sections[3].name, "final norm, LM head and loss (last stage)");
}

TEST(Roofline, ErrorsNameTheField) {
  const Gpu& v100 = *builtin_gpus().find("v100-32gb");
  Result<Roofline> bf16 = compute_roofline(llama8b(), v100);  // Volta has no bf16 tensor cores
  ASSERT_FALSE(bf16.ok());
  EXPECT_EQ(bf16.error().field, "gpu");
  Scenario fp16 = llama8b();
  fp16.training.activation_dtype = DType::kFp16;
  EXPECT_TRUE(compute_roofline(fp16, v100).ok());
  Scenario bad = llama8b();
  bad.parallel.tp = 3;
  EXPECT_EQ(compute_roofline(bad, h100()).error().field, "tp");
  Gpu no_bandwidth = h100();
  no_bandwidth.hbm_gbps = 0;
  EXPECT_EQ(compute_roofline(llama8b(), no_bandwidth).error().field, "gpu");
}

TEST(Roofline, CsvHasOneLinePerOperation) {
  Result<Roofline> r = compute_roofline(llama8b(), h100());
  ASSERT_TRUE(r.ok());
  size_t ops = 0;
  for (const RooflineSection& section : r->sections) ops += section.ops.size();
  const std::string csv = render_roofline_csv(*r);
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), ops + 1);
}

}  // namespace
}  // namespace vramplan
