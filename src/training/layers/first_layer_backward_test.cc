#include <gtest/gtest.h>

#include <string>

#include "model/test_models.h"
#include "training/activations.h"
#include "vramplan/model/params.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace {

// Two Llama-3.1-8B layers under transformers' model code on one GPU, pure bf16, gradients made
// lazily, one microbatch of `seq` tokens.
Scenario two_layers(int64_t seq) {
  Scenario s;
  s.model = testing::llama8b_shape();
  s.model.num_layers = 2;
  s.model.moe_layers.assign(2, false);
  s.model.layer_attention.assign(2, LayerAttention::kFull);
  apply_model_code(ModelCode::kTransformers, s);
  s.conventions.lazy_gradients = true;
  s.training.seq_len = seq;
  s.training.micro_batch = 1;
  s.training.global_batch = 1;
  s.training.param_dtype = s.training.grad_dtype = s.training.activation_dtype = DType::kBf16;
  s.training.optimizer_state_dtype = DType::kBf16;
  s.training.master_weights = false;
  s.training.fp32_grad_accumulation = false;
  return s;
}

int64_t row(const StageEstimate& stage, const std::string& component) {
  for (const Row& r : stage.rows)
    if (r.component == component) return r.bytes;
  return 0;
}

constexpr const char* kRow = "first layer's backward (saved + in flight)";

TEST(FirstLayerBackward, ShortSequencesPeakLateWithMostGradients) {
  // 256 tokens: one layer's activations are small beside a layer's gradients, so the peak comes
  // as the first layer starts its backward.
  const Scenario s = two_layers(256);
  // The optimizer step, with every gradient and Adam's states, is larger still: show the
  // forward/backward's rows.
  Result<Estimate> e = estimate(s, {.explain = true, .rows_at = RowsAt::kForwardBackward});
  ASSERT_TRUE(e.ok());
  const StageEstimate& stage = e->stages.front();
  const ParamCounts counts = count_parameters(s.model);
  const LayerParams& first = counts.layers.front();
  const int64_t all = counts.total;
  // Not made yet: the first layer's weights but down_proj's (h·f), and the input embedding's.
  const int64_t pending = first.total() - 4096 * 14336 + counts.embedding;
  EXPECT_EQ(row(stage, "gradients"), 2 * (all - pending));
  // Its saved tensors plus the transient of its backward's first ops, no .grad to add to.
  const int64_t saved = layer_activations(s, false, false).bytes;
  EXPECT_EQ(row(stage, kRow), saved + layer_backward_transient(s, false, false).bytes);
  EXPECT_EQ(row(stage, "activations"), 0);
  EXPECT_EQ(row(stage, "logits + loss"), 0);
}

TEST(FirstLayerBackward, WithFrozenLayersTheFirstTrainedLayerComesLast) {
  // The embedding and layer 0 frozen: the backward stops at layer 1, whose weights but
  // down_proj's have no gradient yet; no embedding gradient is coming.
  Scenario s = two_layers(256);
  s.finetune.freeze_embeddings = true;
  s.finetune.freeze_first_layers = 1;
  Result<Estimate> e = estimate(s, {.explain = true, .rows_at = RowsAt::kForwardBackward});
  ASSERT_TRUE(e.ok());
  const StageEstimate& stage = e->stages.front();
  const ParamCounts counts = count_parameters(s.model);
  const LayerParams& trained = counts.layers[1];
  const int64_t trainable = trained.total() + counts.lm_head + counts.final_norm;
  EXPECT_EQ(row(stage, "gradients"), 2 * (trainable - (trained.total() - 4096 * 14336)));
  EXPECT_GT(row(stage, kRow), 0);
}

TEST(FirstLayerBackward, LongSequencesPeakAtTheStartWithNoGradient) {
  Result<Estimate> e =
      estimate(two_layers(8192), {.explain = true, .rows_at = RowsAt::kForwardBackward});
  ASSERT_TRUE(e.ok());
  const StageEstimate& stage = e->stages.front();
  EXPECT_EQ(row(stage, kRow), 0);
  EXPECT_EQ(row(stage, "gradients"), 0);
  EXPECT_GT(row(stage, "logits + loss"), 0);
}

TEST(FirstLayerBackward, OnlyWhereItsOpOrderWasRead) {
  Scenario two_gpus = two_layers(256);
  two_gpus.parallel.tp = 2;
  Result<Estimate> e = estimate(two_gpus);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(row(e->stages.front(), kRow), 0);
  Scenario megatron = two_layers(256);
  megatron.conventions.model_code = ModelCode::kDefault;
  e = estimate(megatron);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(row(e->stages.front(), kRow), 0);
}

// gpt-oss's eager attention with sinks: its attention backward holds three score-sized tensors
// (the softmax's input gradient, max's new_zeros and scatter), b·a·s·(s+1)·B each.
Scenario gpt_oss(DType dtype, Recompute recompute) {
  Scenario s;
  s.model = testing::preset_model("gpt-oss-20b", 2);
  apply_model_code(ModelCode::kTransformers, s);
  s.conventions.lazy_gradients = true;
  s.training.seq_len = 4096;
  s.training.micro_batch = s.training.global_batch = 1;
  s.training.flash_attention = false;  // transformers' default for gpt-oss: eager
  s.training.param_dtype = s.training.grad_dtype = s.training.activation_dtype = dtype;
  s.training.optimizer_state_dtype = dtype;
  s.training.master_weights = false;
  s.training.fp32_grad_accumulation = false;
  s.training.recompute = recompute;
  return s;
}

TEST(FirstLayerBackward, SinkAttentionBackwardHoldsThreeScoreTensors) {
  const int64_t scores = int64_t{64} * 4096 * 4097;  // b·a·s·(s+1), 64 heads
  // Full recomputation: the first layer's attention backward, its attention side re-created,
  // every gradient made but its attention's, norms' and the input embedding's.
  Result<Estimate> full = estimate(gpt_oss(DType::kBf16, Recompute::kFull), {.explain = true});
  ASSERT_TRUE(full.ok()) << full.error().message();
  const StageEstimate& f = full->stages.front();
  EXPECT_GT(row(f, kRow), 3 * scores * 2);
  const ParamCounts counts = count_parameters(gpt_oss(DType::kBf16, Recompute::kFull).model);
  const LayerParams& first = counts.layers.front();
  const int64_t pending =
      first.attention + first.attention_replicated + first.norms + counts.embedding;
  EXPECT_EQ(row(f, "gradients"), 2 * (counts.total - counts.buffers - pending));
  // fp32 without recomputation: the last layer's attention backward, beside every other
  // layer's saved tensors and the LM head's and its MoE block's gradients only.
  Result<Estimate> fp32 = estimate(gpt_oss(DType::kFp32, Recompute::kNone), {.explain = true});
  ASSERT_TRUE(fp32.ok()) << fp32.error().message();
  const StageEstimate& e = fp32->stages.front();
  const LayerParams& last = counts.layers.back();
  EXPECT_EQ(row(e, "gradients"), 4 * (counts.lm_head + counts.final_norm + last.mlp + last.router +
                                      last.routed_experts));
  EXPECT_GT(row(e, kRow), 3 * scores * 4);
}

}  // namespace
}  // namespace vramplan
