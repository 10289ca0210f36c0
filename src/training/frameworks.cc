#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace {

// Reserved-above-allocated for frameworks that run PyTorch's caching allocator without
// expandable segments: torchtitan measured reserved 20–36% above peak active (FORMULAS.md §5);
// the low end is taken.
constexpr double kFragmentedPool = 0.20;

void megatron(Scenario& s) {
  // --make-vocab-size-divisible-by 128 (arguments.py); fused bias_swiglu keeps gate|up and the
  // activation output; the fp32 cross-entropy keeps one fp32 copy of the logits; the DDP's
  // contiguous main_grad buffer is the gradient (fp32 with --accumulate-allreduce-grads-in-fp32,
  // the default for bf16; below it the optimizer takes an fp32 copy, main_grad.float());
  // NVIDIA's recipes set expandable_segments, so the pool stays near 10%. The local attention's
  // scores buffer (attention_scores_buffer) is left to --transformer-impl local users: Transformer
  // Engine, the default, allocates unfused scores per layer, and keeps its own 32 MiB cuBLAS
  // workspace (transformer_engine/pytorch/module/base.py get_workspace) beside PyTorch's two.
  s.conventions.vocab_pad_multiple = 128;
  s.overheads.gemm_workspace_bytes = int64_t{96} << 20;
  s.conventions.gated_mlp_tensors = 3;
  s.conventions.loss_bytes_per_logit = 6;
  s.conventions.fp32_grad_copy = true;  // optimizer's main_grad.float()
  s.overheads.allocator_fraction = 0.10;
}

void nanotron(Scenario& s) {
  // models/llama.py: unfused GLU (4 f-wide tensors); functional.py sharded_cross_entropy: fp32
  // cast plus out-of-place max subtraction (2 + 4 + 4 B/logit); models/base.py build_model:
  // pipeline split by compute cost; FP32GradientAccumulator: fp32 grad buffer and fp32 master.
  // The MHA packed-Q|K|V buffer and 8 B/logit, also read in its code, stay off: docs/frameworks.md
  // (Known gaps) gives what they do to the Ultra-Scale sweep.
  s.conventions.gated_mlp_tensors = 4;
  s.conventions.loss_bytes_per_logit = 10;
  s.conventions.pipeline_keeps_stage_outputs = true;  // PipelineEngine keeps sent activations
  s.conventions.tp_allgather_buffer = true;  // tp_recompute_allgather: MemoryBuffer "allgather"
  s.parallel.compute_balanced_split = true;
  s.overheads.allocator_fraction = kFragmentedPool;
}

void torchtitan(Scenario& s) {
  // FSDP2 with MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): sharded fp32
  // parameters are the master copy, sharded fp32 gradients, bf16 compute; FeedForward keeps
  // w1·x, w3·x, silu and the product (4); cross_entropy_loss upcasts the logits (2 + 4 + 4).
  // Gradients are set to None after each step; torch.distributed.pipelining's stages keep
  // their outputs for the backward, and with PP each stage stays all-gathered and accumulates
  // unsharded fp32 gradients until its last backward. Its TP plan (parallelize_llama.py apply_tp)
  // redistributes the sequence-sharded norm outputs to Replicate before wq/wk/wv, w1/w3 and the
  // output projection (PrepareModuleInput, ColwiseParallel(input_layouts=Shard(1))), so each of
  // those linears saves the all-gathered input. Pipeline stages: generate_llm_fqn_per_model_part
  // counts the embedding and the norm + output as one layer each and gives the remainder to the
  // first stages.
  s.parallel.fsdp = FsdpMode::kFullShard;
  s.parallel.embedding_as_stage = true;
  s.parallel.loss_as_stage = true;
  s.parallel.balanced_split = true;
  s.conventions.sp_saves_gathered_inputs = true;
  s.conventions.fsdp_mixed_precision = true;
  s.conventions.lazy_gradients = true;
  s.conventions.pipeline_keeps_stage_outputs = true;
  s.conventions.pipeline_keeps_last_outputs = true;
  s.conventions.pipeline_fsdp_unsharded = true;
  s.conventions.tp_embedding_grad_whole = true;
  s.training.param_dtype = DType::kFp32;
  s.training.grad_dtype = DType::kFp32;
  s.training.fp32_grad_accumulation = false;
  s.training.master_weights = false;
  s.conventions.gated_mlp_tensors = 4;
  s.conventions.loss_bytes_per_logit = 10;
  s.overheads.allocator_fraction = kFragmentedPool;
}

void deepspeed(Scenario& s) {
  // ZeRO with bf16: fp32 master weights and fp32 gradient partitions; reduce_bucket_size and
  // allgather_bucket_size default to 5e8 elements (runtime/zero/config.py), held in the
  // gradient dtype; ZeRO-3 keeps up to stage3_max_live_parameters (1e9) gathered
  // (runtime/zero/partitioned_param_coordinator.py); Hugging Face transformers models.
  s.parallel.zero = 2;
  apply_model_code(ModelCode::kTransformers, s);
  s.conventions.comm_bucket_elements = 500'000'000;
  s.conventions.zero3_live_params = 1'000'000'000;    // stage3_max_live_parameters
  s.conventions.pipeline_keeps_stage_outputs = true;  // PipelineEngine's pipe_buffers outputs
  s.overheads.allocator_fraction = kFragmentedPool;
}

void hf_trainer(Scenario& s) {
  // Trainer --bf16 is torch.autocast over fp32 weights: fp32 params, grads and Adam states, no
  // separate master copy; autocast caches a bf16 copy of each weight for the backward; the
  // default optimizer is the fused AdamW with torch >= 2.8 (training_args.py default_optim
  // "adamw_torch_fused"), which allocates no step temporary (optimizer_foreach_temporaries for
  // the older foreach "adamw_torch"); DDP
  // (gradient_as_bucket_view=False, accelerate's default) keeps a second copy of the gradients
  // in its buckets; the model is transformers' code.
  s.training.param_dtype = DType::kFp32;
  s.training.grad_dtype = DType::kFp32;
  s.training.fp32_grad_accumulation = false;
  s.training.master_weights = false;
  apply_model_code(ModelCode::kTransformers, s);
  s.conventions.ddp_bucket_copy = true;
  s.conventions.autocast_weight_cache = true;
  s.conventions.lazy_gradients = true;  // model.zero_grad() sets them to None
  // accelerate's FSDP (TRANSFORMER_BASED_WRAP) wraps the model's _no_split_modules layers and
  // the root, which keeps the embedding, final norm and LM head gathered (fsdp_root_unit).
  s.conventions.fsdp_root_unit = true;
  s.overheads.allocator_fraction = kFragmentedPool;
}

}  // namespace

void apply_model_code(ModelCode code, Scenario& s) {
  s.conventions.model_code = code;
  if (code == ModelCode::kTorchtune) {
    // torchtune/modules/feed_forward.py: w2(silu(w1·x) * w3·x), four f-wide tensors; the
    // recipes' loss, CEWithChunkedOutputLoss (num_output_chunks 8), keeps the bf16 logit chunks
    // and each chunk's fp32 log_softmax output (2 + 4) while it upcasts one chunk at a time.
    s.conventions.gated_mlp_tensors = 4;
    s.conventions.loss_bytes_per_logit = 6;
    s.conventions.loss_chunks = 8;
    return;
  }
  if (code != ModelCode::kTransformers) return;
  // transformers' gated MLPs (LlamaMLP and kin): down_proj(act_fn(gate_proj(x)) * up_proj(x))
  // keeps gate, up, the activation and the product. ForCausalLMLoss: logits.float(), then
  // F.cross_entropy (log_softmax + nll_loss): the forward holds the logits, their fp32 copy and
  // log_softmax's output (2 + 4 + 4); once the caller drops the logits, the backward holds
  // log_softmax's saved output, nll_loss's fp32 gradient and log_softmax's (4 + 4 + 4).
  s.conventions.gated_mlp_tensors = 4;
  s.conventions.loss_bytes_per_logit = 12;
}

void apply_framework(Framework framework, Scenario& s) {
  s.conventions = Conventions{};
  s.framework_id = static_cast<int>(framework);
  switch (framework) {
    case Framework::kMegatron:
      return megatron(s);
    case Framework::kTorchtitan:
      return torchtitan(s);
    case Framework::kDeepspeed:
      return deepspeed(s);
    case Framework::kNanotron:
      return nanotron(s);
    case Framework::kHfTrainer:
      return hf_trainer(s);
  }
}

}  // namespace vramplan
