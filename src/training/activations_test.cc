#include "training/activations.h"

#include <gtest/gtest.h>

#include "model/test_models.h"

namespace vramplan {
namespace {

Scenario llama(int64_t seq, int64_t tp = 1, bool sp = true) {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = seq;
  s.parallel.tp = tp;
  s.parallel.sequence_parallel = sp;
  return s;
}

TEST(Activations, LlamaLayerMatchesHandArithmetic) {
  // n = 8192 tokens, h = 4096, a = 32, g = 8, d = 128, f = 14336, B = 2, flash, no dropout:
  //   norm inputs 2·n·h·2        = 134,217,728
  //   QKV input n·h·2            =  67,108,864
  //   Q,K,V n·(32+16)·128·2      = 100,663,296
  //   attention output n·a·d·2   =  67,108,864
  //   softmax stats n·a·4        =   1,048,576
  //   MLP input n·h·2            =  67,108,864
  //   MLP 3·n·f·2                = 704,643,072
  //   total                      = 1,141,899,264 = s·h·(12 + 4g/a + 6f/h)·1 + stats
  Term t = layer_activations(llama(8192), false, true);
  EXPECT_EQ(t.bytes, 1'141'899'264);
  EXPECT_NE(t.formula.find("MLP intermediates"), std::string::npos);
  EXPECT_EQ(layer_activations(llama(8192), false, false).formula, "");
}

TEST(Activations, OpLevelCheckpointingKeepsEveryOtherMatmul) {
  // torchtitan's selective "op" policy, n = 8192, Llama-3-8B shapes, B = 2:
  //   layer input n·h·2                  =  67,108,864
  //   Q, V n·(32+8)·128·2                =  83,886,080
  //   attention output + lse n·32·(256+4) =  68,157,440
  //   MLP up (w1) n·f·2                  = 234,881,024
  //   MLP down (w2) n·h·2                =  67,108,864
  //   total                              = 521,142,272
  Scenario s = llama(8192);
  s.training.recompute = Recompute::kSelectiveOp;
  EXPECT_EQ(layer_activations(s, false, false).bytes, 521'142'272);
  // TP 4 with SP: all split by t except w2's output, a full-width partial sum before its
  // reduce-scatter.
  Scenario tp4 = llama(8192, 4);
  tp4.training.recompute = Recompute::kSelectiveOp;
  EXPECT_EQ(layer_activations(tp4, false, false).bytes, 180'617'216);
}

TEST(Activations, Fp8LinearsKeepTheirInputsInFp8) {
  // Transformer Engine, n = 8192, Llama-3-8B shapes: the QKV and MLP inputs and the
  // down-projection's input drop from 2 B to 1 B; the output projection keeps a 1 B copy of the
  // attention output beside the kernel's bf16 one:
  //   QKV input   67,108,864 -> 33,554,432
  //   attention   67,108,864 + 33,554,432
  //   MLP input   67,108,864 -> 33,554,432
  //   MLP 3·n·f·2 704,643,072 -> 2·n·f·2 + n·f = 587,202,560
  //   total       1,141,899,264 - 33,554,432 - 33,554,432 + 33,554,432 - 117,440,512
  Scenario s = llama(8192);
  s.training.fp8 = Fp8Recipe::kTensorwise;
  Term t = layer_activations(s, false, true);
  EXPECT_EQ(t.bytes, 990'904'320);
  EXPECT_NE(t.formula.find("QKV input (fp8)"), std::string::npos);
  EXPECT_NE(t.formula.find("q = 1 (tensorwise)"), std::string::npos);
  // Delayed scaling stores the same; blockwise and MXFP8 add one byte of scale per 32 values
  // of each fp8 tensor: (n·h + n·a·d + n·h + n·f)/32.
  s.training.fp8 = Fp8Recipe::kDelayed;
  EXPECT_EQ(layer_activations(s, false, false).bytes, 990'904'320);
  s.training.fp8 = Fp8Recipe::kMxfp8;
  const Wide scales = (3 * Wide{8192} * 4096 + Wide{8192} * 14336) / 32;
  EXPECT_EQ(layer_activations(s, false, false).bytes, 990'904'320 + scales);
  s.training.fp8 = Fp8Recipe::kBlockwise;
  EXPECT_EQ(layer_activations(s, false, false).bytes, 990'904'320 + scales);
}

TEST(Activations, Fp8ScalesAndWeightCopies) {
  EXPECT_EQ(fp8_activation_bytes(100, Fp8Recipe::kTensorwise), 100);
  EXPECT_EQ(fp8_activation_bytes(100, Fp8Recipe::kMxfp8), 104);  // ⌈100/32⌉ scales
  EXPECT_EQ(fp8_weight_bytes(128 * 128 * 3, Fp8Recipe::kBlockwise), 128 * 128 * 3 + 3 * 4);
  EXPECT_EQ(fp8_weight_bytes(64, Fp8Recipe::kMxfp8), 66);
  EXPECT_EQ(fp8_weight_bytes(64, Fp8Recipe::kDelayed), 64);
}

TEST(Activations, SequenceParallelSplitsEverythingByTp) {
  EXPECT_EQ(layer_activations(llama(8192, 4, true), false, false).bytes, 1'141'899'264 / 4);
}

TEST(Activations, WithoutSequenceParallelNormsAndInputsAreReplicated) {
  // Replicated: norms 134,217,728 + QKV input 67,108,864 + MLP input 67,108,864 = 268,435,456;
  // split by 4: (100,663,296 + 67,108,864 + 1,048,576 + 704,643,072)/4 = 218,365,952.
  EXPECT_EQ(layer_activations(llama(8192, 4, false), false, false).bytes, 486'801'408);
}

TEST(Activations, MaterialisedAttentionStoresScores) {
  // Adds the softmax output n·s·a·2 = 8192·8192·32·2 = 4,294,967,296 and drops flash's stats.
  Scenario s = llama(8192);
  s.training.flash_attention = false;
  EXPECT_EQ(layer_activations(s, false, false).bytes, 1'141'899'264 - 1'048'576 + 4'294'967'296);
  s.training.recompute = Recompute::kSelective;  // selective recompute drops exactly that term
  EXPECT_EQ(layer_activations(s, false, false).bytes, 1'141'899'264 - 1'048'576);
}

TEST(Activations, DropoutAddsMasks) {
  // Two n·h one-byte masks = 2·8192·4096 = 67,108,864.
  Scenario s = llama(8192);
  s.training.dropout = true;
  EXPECT_EQ(layer_activations(s, false, false).bytes, 1'141'899'264 + 67'108'864);
}

TEST(Activations, ContextParallelSplitsTheSequence) {
  Scenario s = llama(8192);
  s.parallel.cp = 2;
  EXPECT_EQ(tokens_per_rank(s), 4096);
  EXPECT_EQ(layer_activations(s, false, false).bytes, 1'141'899'264 / 2);
}

TEST(Activations, RecomputedLayerKeepsItsInput) {
  EXPECT_EQ(recomputed_layer_input(llama(8192), false).bytes, 8192LL * 4096 * 2);
  EXPECT_EQ(recomputed_layer_input(llama(8192, 4), false).bytes, 8192LL * 4096 * 2 / 4);
}

TEST(Activations, LogitsInActivationDtypePlusFp32Copy) {
  // n·V·(2 + 4) = 8192·128256·6 = 6,304,038,912; TP splits the vocabulary.
  EXPECT_EQ(logits_and_loss(llama(8192), false).bytes, 6'304'038'912);
  EXPECT_EQ(logits_and_loss(llama(8192, 2), false).bytes, 6'304'038'912 / 2);
  // Without loss parallelism the LM head's output is gathered: every TP rank holds it whole.
  Scenario gathered = llama(8192, 2);
  gathered.parallel.loss_parallel = false;
  const Term whole = logits_and_loss(gathered, true);
  EXPECT_EQ(whole.bytes, 6'304'038'912);
  EXPECT_NE(whole.formula.find("no loss parallelism"), std::string::npos);
}

TEST(Activations, MoeLayerCountsDispatchedTokens) {
  // tiny MoE, n = 128 tokens, h 64, E 8, k 2, f_e 32, B 2, t 1:
  //   norm inputs 2·128·64·2 = 32,768; QKV input 16,384; Q,K,V 128·(4+4)·16·2 = 32,768;
  //   attention output 128·4·16·2 = 16,384; stats 128·4·4 = 2,048;
  //   router input 16,384; router scores 2·128·8·4 = 8,192;
  //   dispatched + outputs 2·(128·2)·64·2 = 65,536; expert intermediates 3·256·32·2 = 49,152
  //   total 239,616
  Scenario s;
  s.model = testing::tiny_moe();
  s.training.seq_len = 128;
  EXPECT_EQ(layer_activations(s, true, false).bytes, 239'616);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

TEST(Activations, UnfusedGluKeepsAFourthTensor) {
  // nanotron/Hugging Face keep 4 f-wide tensors: + n·f·2 = 8192·14336·2 = 234,881,024.
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = 8192;
  s.conventions.gated_mlp_tensors = 4;
  EXPECT_EQ(layer_activations(s, false, false).bytes, 1'141'899'264 + 234'881'024);
}

TEST(Activations, NanotronMhaKeepsKAndVTwice) {
  // With MHA the packed Q|K|V buffer outlives the permute: + n·2g·d·B = 8192·2·32·128·2.
  Scenario s;
  s.model = testing::llama8b_shape();
  s.model.num_kv_heads = s.model.num_heads;
  s.training.seq_len = 8192;
  const int64_t plain = layer_activations(s, false, false).bytes;
  s.conventions.mha_keeps_packed_qkv = true;
  EXPECT_EQ(layer_activations(s, false, false).bytes - plain, 134'217'728);
  // GQA splits Q, K and V into their own buffers: nothing is kept twice.
  s.model.num_kv_heads = 8;
  const int64_t gqa = layer_activations(s, false, false).bytes;
  s.conventions.mha_keeps_packed_qkv = false;
  EXPECT_EQ(layer_activations(s, false, false).bytes, gqa);
}

TEST(Activations, LossBytesPerLogitFollowTheFramework) {
  // torchtitan, Hugging Face: 10 B per logit = n·V·10 = 8192·128256·10 = 10,506,731,520.
  Scenario s;
  s.model = testing::llama8b_shape();
  s.training.seq_len = 8192;
  s.conventions.loss_bytes_per_logit = 10;
  EXPECT_EQ(logits_and_loss(s, false).bytes, 10'506'731'520);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

TEST(Activations, TransformersRmsNormsKeepTheirFp32Upcast) {
  // LlamaRMSNorm: hidden_states.to(float32) is kept by pow and the rsqrt product (4 B), and
  // weight * hidden_states.to(input_dtype) keeps the normalised value cast back (B = 2), plus
  // the fp32 rsqrt per token: per norm n·(h·(4+2) + 4) instead of the input n·h·2. The two
  // norms of a layer, n = 8192, h = 4096: 2·8192·(4096·6 + 4) − 2·8192·4096·2 = 268,500,992.
  Scenario hf = llama(8192);
  hf.conventions.model_code = ModelCode::kTransformers;
  hf.conventions.gated_mlp_tensors = 3;  // only the norms differ from llama(8192)
  EXPECT_EQ(layer_activations(hf, false, false).bytes -
                layer_activations(llama(8192), false, false).bytes,
            268'500'992);
  EXPECT_EQ(head_activations(hf, false).bytes - head_activations(llama(8192), false).bytes,
            8192 * (4096 * 4 + 4));  // the final norm likewise
  // Gemma, OLMo-2 and gpt-oss multiply the weight in fp32 before casting back: 4 + 4 per value.
  hf.model.model_type = "gemma2";
  EXPECT_EQ(norm_keeps(hf).per_value, 8);
  hf.model.model_type = "olmo2";
  EXPECT_EQ(norm_keeps(hf).per_value, 8);
  // nn.LayerNorm (GPT-2) is one kernel: its input, and the fp32 mean and rstd per token.
  hf.model.norm = NormKind::kLayerNorm;
  EXPECT_EQ(norm_keeps(hf).per_value, 2);
  EXPECT_EQ(norm_keeps(hf).per_token, 8);
  // The framework's own fused norms keep their input only.
  EXPECT_EQ(norm_keeps(llama(8192)).per_value, 2);
  EXPECT_EQ(norm_keeps(llama(8192)).per_token, 0);
}

// transformers' SDPA on fp32 with grouped-query heads and no mask: FlashAttention cannot take
// fp32 and the memory-efficient kernel takes no grouped heads, so CUDA runs the math kernel,
// which keeps the s×s probabilities per layer (in fp32, b = 1, a = 32, s = 4096: 2 GiB) in place
// of flash's 4-byte statistics, and its backward two more for one layer.
TEST(Activations, TransformersFp32GroupedQueryAttentionRunsTheMathKernel) {
  Scenario hf = llama(4096);
  hf.conventions.model_code = ModelCode::kTransformers;
  hf.training.activation_dtype = DType::kFp32;
  const Wide stats = 4096 * 32 * 4;
  const Wide probs = Wide{4096} * 4096 * 32 * 4;
  Scenario bf16 = hf;
  bf16.training.activation_dtype = DType::kBf16;
  EXPECT_EQ(math_attention_backward_scratch(bf16, false).bytes, 0);
  EXPECT_EQ(math_attention_backward_scratch(hf, false).bytes, 2 * probs);
  // Equal head counts run the memory-efficient kernel, with its statistics only.
  Scenario mha = hf;
  mha.model.num_kv_heads = mha.model.num_heads;
  EXPECT_EQ(math_attention_backward_scratch(mha, false).bytes, 0);
  const Term t = layer_activations(hf, false, true);
  EXPECT_NE(t.formula.find("attention probabilities (SDPA math kernel)"), std::string::npos);
  // The same layer with K and V repeated for the efficient kernel (a mask-less MHA difference
  // aside) differs by the probabilities less the statistics.
  Scenario efficient = hf;
  efficient.model.sliding_window = 1024;  // masked sliding layers stay on the efficient kernel
  EXPECT_EQ(
      layer_activations(hf, false, false).bytes - layer_activations(efficient, false, false).bytes,
      probs - stats);
}

TEST(Activations, FirstTrainedLayerAfterFrozenOnesKeepsOnlyTheNormsWeightPart) {
  // Llama's RMSNorm keeps its fp32 upcast (4 B), the normalised value cast back (B = 2) and the
  // rsqrt (4 B per token); with a frozen embedding the first layer's input needs no gradient,
  // so only the weight's part (B) stays: n·(h·4 + 4) less.
  Scenario s = llama(4096);
  s.conventions.model_code = ModelCode::kTransformers;
  EXPECT_EQ(first_trained_layer_saving(s, false).bytes, 0);
  s.finetune.freeze_embeddings = true;
  EXPECT_EQ(first_trained_layer_saving(s, false).bytes, Wide{4096} * (4096 * 4 + 4));
  s.model.model_type = "olmo2";  // post-norm: no norm on the layer's input
  EXPECT_EQ(first_trained_layer_saving(s, false).bytes, 0);
}

TEST(Activations, SequenceParallelShowsTransformersTheSequenceShard) {
  // Mistral v0.1: a 4,096-token window; at 4,096 tokens its layers get a mask, unless sequence
  // parallelism hands transformers the rank's 2,048-token shard.
  Scenario s = llama(4096);
  s.conventions.model_code = ModelCode::kTransformers;
  s.model.sliding_window = 4096;
  s.model.layer_attention.assign(32, LayerAttention::kSliding);
  EXPECT_TRUE(sliding_layers_masked(s));
  Scenario tp = llama(4096, 2, false);
  tp.conventions = s.conventions;
  tp.model = s.model;
  EXPECT_TRUE(sliding_layers_masked(tp));
  tp.parallel.sequence_parallel = true;
  EXPECT_FALSE(sliding_layers_masked(tp));
}

// Nemotron-H-8B's Mamba-2 block (h 4096, H 128 heads of P 64, N 128, G 8), n = 8192, B = 2:
//   norm input n·h·2                          =  67,108,864 (one norm per block)
//   in_proj input n·h·2                       =  67,108,864
//   zxbcdt n·(2·8192 + 2·8·128 + 128)·2       = 304,087,040
//   out_x n·8192·2                            = 134,217,728
//   rstd n·8·4                                =     262,144
//   total                                     = 572,784,640
TEST(Activations, Mamba2BlockMatchesHandArithmetic) {
  Scenario s = llama(8192);
  s.model.norms_per_layer = 1;
  s.model.mamba = Mamba2Config{128, 64, 128, 8, 4, true, false, true};
  Term t = layer_activations(s, false, true, LayerMixer::kMamba2, /*has_mlp=*/false);
  EXPECT_EQ(t.bytes, 572'784'640);
  EXPECT_NE(t.formula.find("zxbcdt"), std::string::npos);
}

// Jamba's Mamba-1 (h 4096, d_inner 8192, R 256, N 16), n = 8192, B = 2, one norm:
//   norm input 67,108,864; in_proj input 67,108,864; x, z, u 3·n·8192·2 = 402,653,184
//   x_proj output and norm outputs 2·n·288·2 = 9,437,184; delta, out, out_z 402,653,184
//   chunk states 4 · 8192 · 32 · 4 = 4,194,304 -> 953,155,584
TEST(Activations, Mamba1MixerMatchesHandArithmetic) {
  Scenario s = llama(8192);
  s.model.norms_per_layer = 1;
  s.model.mamba = Mamba2Config{8192, 1, 16, 0, 4, true, false, false, false, 256};
  Term t = layer_activations(s, false, true, LayerMixer::kMamba2, /*has_mlp=*/false);
  EXPECT_EQ(t.bytes, 953'155'584);
  EXPECT_NE(t.formula.find("scan chunk states"), std::string::npos);
}

// Falcon-H1 runs the same Mamba-2 mixer beside attention: the attention layer's activations
// plus the mixer's in_proj input, zxbcdt, out_x and rstd (505,675,776 B at the sizes above).
TEST(Activations, ParallelMambaAddsTheMixerToAttentionLayers) {
  Scenario s = llama(8192);
  s.model.mamba = Mamba2Config{128, 64, 128, 8, 4, true, false, true};
  const Term attention = layer_activations(s, false, true, LayerMixer::kAttention, true);
  s.model.parallel_mamba = true;
  const Term both = layer_activations(s, false, true, LayerMixer::kAttention, true);
  EXPECT_EQ(both.bytes - attention.bytes, 505'675'776);
  EXPECT_NE(both.formula.find("zxbcdt"), std::string::npos);
}

// Qwen3-Next's gated DeltaNet (h 2048, Hk 16 × 128 = k 2048, Hv 32 × 128 = v 4096), n = 8192:
//   norm inputs 2·n·h·2 67,108,864; in_proj input n·h·2 33,554,432
//   projections n·(2·2048 + 2·4096 + 64)·2 = 202,375,168
//   conv input + output 2·n·8192·2 = 268,435,456; kernel q, k, v n·8192·2 = 134,217,728
//   g, beta n·64·4 = 2,097,152; A n·32·64·4 = 67,108,864; norm/gate/out_proj 3·n·4096·2
//   = 201,326,592 -> 976,224,256
TEST(Activations, GatedDeltaNetMatchesHandArithmetic) {
  Scenario s = llama(8192);
  s.model.hidden = 2048;
  s.model.deltanet = GatedDeltaNetConfig{16, 32, 128, 128, 4};
  Term t = layer_activations(s, false, false, LayerMixer::kGatedDeltaNet, /*has_mlp=*/false);
  EXPECT_EQ(t.bytes, 976'224'256);
}

TEST(Activations, AutocastOverFp32WeightsKeepsAnFp32ResidualAndACastPerLinear) {
  // transformers' code under torch.autocast over fp32 weights (the Trainer's --bf16): the two
  // RMSNorms keep their normalised value in fp32 (2 B more per value each), q, k and v each cast
  // their own bf16 copy of the input (2 more n·h·2) and so do gate and up (1 more): 10·h B per
  // token more than with bf16 weights; the final norm 2·h more. Seen on the reference and on
  // an H200 (Mistral-7B amp rows from -2.8% to 0.0%).
  Scenario s = llama(4096);
  s.conventions.model_code = ModelCode::kTransformers;
  s.training.param_dtype = DType::kFp32;
  const Wide plain = layer_activations(s, false, false).bytes;
  const Wide head = head_activations(s, false).bytes;
  s.conventions.autocast_weight_cache = true;
  const Term autocast = layer_activations(s, false, true);
  EXPECT_EQ(autocast.bytes - plain, Wide{4096} * 10 * 4096);
  EXPECT_EQ(head_activations(s, false).bytes - head, Wide{4096} * 2 * 4096);
  EXPECT_NE(autocast.formula.find("QKV input, autocast's copy per projection 2·n·h·B/t_sp"),
            std::string::npos)
      << autocast.formula;
}

}  // namespace
}  // namespace vramplan
