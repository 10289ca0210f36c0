// Everything an estimate depends on: the model, how it is trained, how it is laid out over GPUs,
// and the costs beyond tensors. Plain values; front ends build it (see scenario_io.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/model/model.h"
#include "vramplan/model/precision.h"

namespace vramplan {

enum class Optimizer { kAdamW, kAdam8bit, kSgd, kSgdMomentum, kAdafactor, kLion, kMuon };
enum class Schedule { k1F1B, kInterleaved, kGPipe };
// kSelective: Megatron's (Korthikanti) — the attention core is recomputed. kSelectiveOp:
// torchtitan's op-level selective checkpointing (activation_checkpoint.selective_ac_option =
// "op") — each layer keeps its input, the outputs of every other matmul and of attention.
enum class Recompute { kNone, kSelective, kFull, kSelectiveOp };
enum class FsdpMode { kNone, kFullShard, kShardGradOp, kHybridShard, kNoShard };
// FP8 training with Transformer Engine (Megatron --fp8-format/--fp8-recipe): the linear layers
// of each decoder layer run in fp8. kDelayed/kTensorwise keep one scale per tensor; kBlockwise
// (DeepSeek-V3 style: 1×128 activation tiles, 128×128 weight blocks) and kMxfp8 (Blackwell:
// one 8-bit scale per 32 values) add scales that cost 1/32 of a byte per activation value.
enum class Fp8Recipe { kNone, kDelayed, kTensorwise, kBlockwise, kMxfp8 };
// How a MoE layer's tokens reach the experts on other expert-parallel ranks (step time only):
// kAllToAll sends one copy per chosen expert (Megatron --moe-token-dispatcher-type alltoall,
// torchtitan); kAllGather gathers every rank's tokens (Megatron's default allgather); kDeepEp and
// kHybridEp (Megatron's flex dispatcher, --moe-flex-dispatcher-backend) send one copy per
// destination rank within a node and one per destination node across nodes.
enum class MoeDispatcher { kAllToAll, kAllGather, kDeepEp, kHybridEp };
inline bool has_block_scales(Fp8Recipe r) {
  return r == Fp8Recipe::kBlockwise || r == Fp8Recipe::kMxfp8;
}

// Names as users type them, indexed by enum value: the one table that parsing, reports and help
// text share.
inline constexpr std::array<const char*, 7> kOptimizerNames = {
    "adamw", "adam8bit", "sgd", "sgd-momentum", "adafactor", "lion", "muon"};
inline constexpr std::array<const char*, 3> kScheduleNames = {"1f1b", "interleaved", "gpipe"};
inline constexpr std::array<const char*, 4> kRecomputeNames = {"none", "selective", "full",
                                                               "selective-op"};
inline constexpr std::array<const char*, 5> kFp8RecipeNames = {"none", "delayed", "tensorwise",
                                                               "blockwise", "mxfp8"};
inline constexpr std::array<const char*, 5> kFsdpNames = {"none", "full_shard", "shard_grad_op",
                                                          "hybrid_shard", "no_shard"};
inline constexpr std::array<const char*, 4> kMoeDispatcherNames = {"alltoall", "allgather",
                                                                   "deepep", "hybridep"};
inline const char* optimizer_name(Optimizer o) { return kOptimizerNames[static_cast<size_t>(o)]; }
inline const char* schedule_name(Schedule s) { return kScheduleNames[static_cast<size_t>(s)]; }
inline const char* recompute_name(Recompute r) { return kRecomputeNames[static_cast<size_t>(r)]; }
inline const char* fsdp_name(FsdpMode f) { return kFsdpNames[static_cast<size_t>(f)]; }
inline const char* fp8_recipe_name(Fp8Recipe r) { return kFp8RecipeNames[static_cast<size_t>(r)]; }
inline const char* moe_dispatcher_name(MoeDispatcher d) {
  return kMoeDispatcherNames[static_cast<size_t>(d)];
}

struct Training {
  int64_t seq_len = 4096;
  int64_t micro_batch = 1;
  int64_t global_batch = 0;  // sequences per step; 0 = micro_batch · dp (one microbatch per rank)

  DType param_dtype = DType::kBf16;
  DType grad_dtype = DType::kBf16;     // dtype gradients are produced in
  bool fp32_grad_accumulation = true;  // gradients accumulate in an fp32 buffer (main_grad)
  DType reduce_dtype = DType::kFp32;   // dtype of the data-parallel gradient reduction
  bool master_weights = true;          // fp32 master copy when params are below fp32
  DType optimizer_state_dtype = DType::kFp32;
  DType activation_dtype = DType::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;

  Recompute recompute = Recompute::kNone;
  int64_t recompute_layers = 0;  // with kFull: layers per stage recomputed; 0 = all of them
  bool flash_attention = true;   // false: the s×s attention scores are materialised
  bool dropout = false;          // dropout masks are kept for backward
  // FP8 linear layers (Transformer Engine). Each one saves its input in fp8 for the backward and
  // caches the fp8 casts of its weight (row- and column-wise) across the step's microbatches.
  Fp8Recipe fp8 = Fp8Recipe::kNone;
  // FP8 primary weights (Megatron --fp8-param-gather, TE fp8_model_init): the decoder layers'
  // linear weights are stored in fp8 instead of param_dtype; the fp32 master copy remains.
  bool fp8_params = false;
  // MoE experts run as grouped GEMMs (Megatron --moe-grouped-gemm with Transformer Engine's
  // GroupedLinear): TE keeps one more cuBLAS workspace per compute stream for them
  // (grouped_gemm_workspace_bytes). No effect on dense models.
  bool moe_grouped_gemm = false;
};

// An fp32 master copy exists only for parameters below fp32 (master_weights asks for one then).
inline bool keeps_master_weights(const Training& t) {
  return t.master_weights && t.param_dtype != DType::kFp32;
}

// The dtype the linear layers' matmuls run in: fp8 under an fp8 recipe, else the activations'.
inline DType matmul_dtype(const Training& t) {
  return t.fp8 != Fp8Recipe::kNone ? DType::kFp8 : t.activation_dtype;
}

// Fine-tuning (finetune.h): which weights train. kNone trains every weight that is not frozen
// (full fine-tuning); LoRA trains low-rank adapters beside frozen weights; QLoRA also stores the
// frozen linear layers in NF4.
enum class FinetuneMethod { kNone, kLora, kQlora };
inline constexpr std::array<const char*, 3> kFinetuneNames = {"none", "lora", "qlora"};
inline const char* finetune_name(FinetuneMethod m) {
  return kFinetuneNames[static_cast<size_t>(m)];
}
// Projections that get LoRA adapters, as bits of Finetune::lora_targets.
enum LoraTarget : uint32_t {
  kLoraQ = 1,
  kLoraK = 2,
  kLoraV = 4,
  kLoraO = 8,
  kLoraGate = 16,
  kLoraUp = 32,
  kLoraDown = 64,
  // MLA's own projections (DeepSeek-V2/V3: q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj).
  // PEFT matches target modules by name: on an MLA model q selects q_proj (only where the model
  // has one: no q_lora_rank) and k, v select nothing, as PEFT does with q_proj, k_proj, v_proj.
  kLoraQA = 128,
  kLoraQB = 256,
  kLoraKVA = 512,
  kLoraKVB = 1024,
};
// Every projection "all-linear" and "attention" name (PEFT's all-linear: every linear but the
// LM head).
inline constexpr uint32_t kLoraAttention =
    kLoraQ | kLoraK | kLoraV | kLoraO | kLoraQA | kLoraQB | kLoraKVA | kLoraKVB;
inline constexpr uint32_t kLoraAllLinear = kLoraAttention | kLoraGate | kLoraUp | kLoraDown;

struct Finetune {
  FinetuneMethod method = FinetuneMethod::kNone;
  int64_t lora_rank = 16;
  uint32_t lora_targets = kLoraQ | kLoraV;  // PEFT's default for Llama-style models
  DType adapter_dtype = DType::kBf16;
  bool freeze_embeddings = false;  // input embedding (and a tied LM head) frozen
  int64_t freeze_first_layers = 0;
};

struct Parallelism {
  int64_t tp = 1;
  bool sequence_parallel = true;  // only meaningful when tp > 1
  // With tp > 1: the loss runs on vocabulary shards (Megatron's vocab-parallel cross entropy,
  // torchtitan's loss_parallel). false: the LM head's output is gathered and every TP rank holds
  // the full-vocabulary logits and loss (torchtitan disable_loss_parallel, transformers' tp_plan
  // colwise_gather_output).
  bool loss_parallel = true;
  int64_t pp = 1;
  int64_t vpp = 1;  // virtual stages (model chunks) per pipeline rank
  Schedule schedule = Schedule::k1F1B;
  int64_t dp = 1;
  int64_t cp = 1;
  int64_t ep = 1;
  int64_t etp = 1;  // expert tensor parallelism

  int64_t zero = 0;  // ZeRO stage 0..3
  FsdpMode fsdp = FsdpMode::kNone;
  int64_t fsdp_shard_group = 0;        // HYBRID_SHARD: ranks per shard group; 0 = all of dp·cp
  bool distributed_optimizer = false;  // Megatron's: optimizer state sharded over dp·cp
  int64_t fsdp_prefetch = 1;           // layers all-gathered ahead of the one computing

  // Uneven pipeline layouts (Megatron's --decoder-first/last-pipeline-num-layers and
  // --account-for-embedding/loss-in-pipeline-split). 0 = split evenly.
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
  bool embedding_as_stage = false;  // the input embedding counts as one layer of the split
  bool loss_as_stage = false;       // final norm + LM head + loss count as one layer
  // When the layers do not divide evenly: false = an error; true = spread the remainder, one
  // extra layer on each of the first chunks (stages may be empty).
  bool balanced_split = false;
  // nanotron's split by compute cost (models/base.py build_model): each decoder layer costs
  // 4·a·d·h + 3·f·h and the LM head V·h; a block joins the current rank, which closes once the
  // running cost exceeds total·(r+1)/pp — so the first ranks take one layer more. vpp = 1 only.
  bool compute_balanced_split = false;
  // An explicit layout (Megatron's --pipeline-model-parallel-layout): the decoder layers of each
  // of the pp·vpp chunks, in chunk order (chunk c on rank c mod pp). Empty = one of the splits
  // above. The embedding is in chunk 0, the loss (and any MTP layers) in the last.
  std::vector<int64_t> chunk_layers;

  int64_t world_size() const { return tp * pp * cp * dp; }
};

// Memory outside PyTorch's tensors. Each is its own row and adjustable.
struct Overheads {
  int64_t cuda_context_bytes = 600ll << 20;    // CUDA context + kernels, lazy loading on
  int64_t nccl_bytes_per_group = 512ll << 20;  // per communicator group of size > 1
  double allocator_fraction = 0.10;            // reserved pool above peak allocated
  // GEMM workspaces held through the caching allocator (so they count as allocated): PyTorch's
  // cuBLAS and cuBLASLt workspaces, 32 MiB each on Hopper; Transformer Engine adds its own.
  int64_t gemm_workspace_bytes = 64ll << 20;
  // Per-layer CUDA graphs (Megatron --cuda-graph-impl local|transformer_engine, NeMo
  // enable_cuda_graph): each captured layer's private memory pool keeps the temporaries of its
  // forward, which eager mode frees. NeMo measured about 20% more activation memory.
  bool per_layer_cuda_graphs = false;
};
// Share of the layers' activations that per-layer CUDA graphs keep reserved in their pools
// (NeMo docs/source/features/optimizations/cudagraphs.md: "~20%").
inline constexpr double kCudaGraphActivationShare = 0.20;

// Whose code computes the layers (docs/frameworks.md, "Model code"). kDefault: the kernels the
// framework's own layers run (Megatron's and Transformer Engine's fused ones, nanotron's,
// torchtitan's), as the other conventions describe them. kTransformers: Hugging Face
// transformers' eager modeling code (modeling_<model_type>.py), which keeps more: its RMSNorm
// upcasts to fp32 and keeps the upcast, its loss is PyTorch's F.cross_entropy on fp32 logits.
// kTorchtune: torchtune's TransformerDecoder (torchtune/modules): its RMSNorm runs F.rms_norm on
// the fp32 upcast with the bf16 weight and keeps both fp32 tensors, its attention repeats K and V
// to every query head before SDPA, its loss is CEWithChunkedOutputLoss.
enum class ModelCode { kDefault, kTransformers, kTorchtune };
inline constexpr std::array<const char*, 3> kModelCodeNames = {"default", "transformers",
                                                               "torchtune"};
inline const char* model_code_name(ModelCode c) { return kModelCodeNames[static_cast<size_t>(c)]; }

// What really differs between training frameworks (see docs/frameworks.md).
struct Conventions {
  // Whose code computes the layers; kTransformers also sets gated_mlp_tensors and
  // loss_bytes_per_logit (apply_model_code, frameworks.h).
  ModelCode model_code = ModelCode::kDefault;
  // The vocabulary is padded to a multiple of this × tp (Megatron's --make-vocab-size-divisible-by,
  // default 128; nanotron's make_vocab_size_divisible_by). 1 = no padding.
  int64_t vocab_pad_multiple = 1;
  // f-wide tensors a gated MLP keeps per token: 3 with a fused SwiGLU (Megatron's
  // bias_swiglu: gate|up output and the activation output), 4 unfused (nanotron, Hugging Face:
  // also the SiLU output kept for the product's backward). Plain GeLU MLPs keep 2.
  int64_t gated_mlp_tensors = 3;
  // Bytes per logit alive at the loss, forward or backward, whichever holds more: Megatron keeps
  // the activation-dtype logits and one fp32 copy (2 + 4); nanotron casts to fp32 and subtracts
  // the max out of place (2 + 4 + 4); PyTorch's F.cross_entropy on fp32 logits (transformers'
  // ForCausalLMLoss, torchtitan's cross_entropy_loss) keeps log_softmax's fp32 output, and its
  // backward adds nll_loss's fp32 gradient and log_softmax's (4 + 4 + 4).
  int64_t loss_bytes_per_logit = 6;
  // The loss upcasts (and, below B + 4 kept bytes, projects) its logits in this many chunks, one
  // at a time (torchtune's CEWithChunkedOutputLoss and LinearCrossEntropyLoss, num_output_chunks
  // 8): beside the kept bytes, the chunk in hand's fp32 upcast, 4/C bytes per logit, is alive,
  // and its activation-dtype logits (B/C) where the loss projects them itself. 0: not chunked.
  int64_t loss_chunks = 0;
  // With sequence parallelism, what a column-parallel linear (QKV, MLP up, LM head) saves for
  // its weight gradient: Megatron saves its sequence shard and all-gathers it again in the
  // backward (false); nanotron before tp_recompute_allgather (2025) saved the gathered input.
  bool sp_saves_gathered_inputs = false;
  // Tensor-parallel communication overlapped with the GEMMs beside it (step time only):
  // Transformer Engine's userbuffers (Megatron --tp-comm-overlap; Megatron-Bridge's performance
  // recipes turn it on whenever tp > 1) and torchtitan's async TP split each all-gather /
  // reduce-scatter into chunks pipelined with the partial GEMMs, so only what outlasts the
  // layer's TP GEMMs is exposed.
  bool tp_comm_overlap = false;
  // Expert-parallel all-to-all overlapped with another microbatch's compute (step time only):
  // Megatron's combined 1F1B (--overlap-moe-expert-parallel-comm, Megatron-Bridge's
  // moe_a2a_overlap; megatron/core/pipeline_parallel/combined_1f1b.py) runs each layer's forward
  // of one microbatch beside its backward of another, the forward's dispatch and combine hidden
  // behind the backward's compute and the other way round; the first forward and the last
  // backward have no partner.
  bool ep_comm_overlap = false;
  // The MoE token dispatcher (step time only; see MoeDispatcher).
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // PyTorch DDP without gradient_as_bucket_view keeps its own copy of every gradient in its
  // buckets (Hugging Face Trainer / accelerate default).
  bool ddp_bucket_copy = false;
  // torch.autocast caches a low-precision copy of each weight between forward and backward.
  bool autocast_weight_cache = false;
  // DeepSpeed ZeRO's reduce/all-gather bucket, in elements of the gradient dtype (0 = none).
  int64_t comm_bucket_elements = 0;
  // ZeRO-3 parameters kept gathered, in elements: DeepSpeed keeps up to
  // stage3_max_live_parameters (1e9) resident and does not release a parameter it reuses within
  // stage3_max_reuse_distance (1e9), so the end of the forward and the start of the backward
  // hold that many. 0 = release each unit after use, keeping only the prefetched ones (FSDP).
  int64_t zero3_live_params = 0;
  // torch's foreach (non-fused) Adam allocates a state-sized temporary during the step.
  bool optimizer_foreach_temporaries = false;
  // Gradients are created by the backward and freed by zero_grad(set_to_none=True) after each
  // step (torch's default since 2.0; FSDP2's sharded grads) instead of living in a persistent
  // buffer (Megatron's main_grad, nanotron's accumulator). With one microbatch per step they
  // are absent while the activations peak at the start of the backward.
  bool lazy_gradients = false;
  // FSDP with a mixed-precision policy (FSDP2 MixedPrecisionPolicy(param_dtype=bf16,
  // reduce_dtype=fp32)) all-gathers the compute-dtype cast, not the stored fp32 shard, and
  // casts each unit's gradients to the reduce dtype before its reduce-scatter.
  bool fsdp_mixed_precision = false;
  // FSDP wraps the decoder layers and the root only (accelerate's TRANSFORMER_BASED_WRAP,
  // torchtune's shard_model): the embedding, final norm and LM head are the root's unit, and
  // FSDP never reshards the root after forward (FSDP2 FSDPState._lazy_init sets the root group's
  // post_forward_mesh_info to None; FSDP1 _post_forward_reshard skips the root), so they stay
  // gathered from the first forward to the end of the backward beside the decoder layers in
  // flight. false: the embedding and the final norm + head are units of their own (torchtitan
  // apply_fsdp).
  bool fsdp_root_unit = false;
  // Pipeline engines that keep each in-flight microbatch's stage output (the hidden state they
  // sent) until its backward: torch.distributed.pipelining, nanotron, DeepSpeed. Megatron frees
  // the output's storage once sent (deallocate_pipeline_outputs).
  bool pipeline_keeps_stage_outputs = false;
  // torch.distributed.pipelining's last stage appends every microbatch's output — the logits —
  // to PipelineStage.output_chunks (forward_one_chunk) and keeps them until the next step clears
  // them (clear_runtime_states): the step's microbatches' logits, in the activation dtype.
  bool pipeline_keeps_last_outputs = false;
  // With MHA (kv heads = heads), nanotron's attention permutes Q|K|V into one buffer that stays
  // alive through the query view flash attention saves, and concatenates K|V into a second
  // buffer flash attention also saves: the K and V parts are held twice.
  bool mha_keeps_packed_qkv = false;
  // nanotron with tp_recompute_allgather (its default since 2025) all-gathers each
  // column-parallel linear's sequence-parallel input into one persistent buffer
  // (MemoryBuffer "allgather", parallel/utils.py) that grows to the largest input, n·h, and is
  // never freed. Only with TP > 1, sequence parallelism and sharded saved inputs.
  bool tp_allgather_buffer = false;
  // FSDP under pipeline parallelism as torchtitan runs it: each stage's parameters stay
  // all-gathered from their first forward to their last microbatch's backward
  // (parallelize_llama.py apply_fsdp: reshard_after_forward=False with PP), and the backward
  // accumulates unsharded gradients, upcast to the reduce dtype, over the microbatches before
  // one reduce-scatter (torch.distributed.pipelining stage.py backward_maybe_with_nosync:
  // set_requires_gradient_sync(False) and set_reshard_after_backward(False) until the last
  // backward; FSDP2 to_accumulated_grad_if_needed). Only with pp > 1 and sharded parameters.
  bool pipeline_fsdp_unsharded = false;
  // Torch-native tensor parallelism (DTensor, torchtitan's plans): the vocabulary-parallel input
  // embedding's weight gradient is made whole, V·h, on every TP rank and stays so as the
  // parameter's .grad until the optimizer step. DTensor's strategies for
  // aten.embedding_dense_backward (torch/distributed/tensor/_ops/_embedding_ops.py) shard the
  // weight gradient on the hidden dimension or leave it Partial, never on the vocabulary.
  // Megatron's VocabParallelEmbedding computes each rank's shard. Not where FSDP reduce-scatters
  // the gradient to its shard, nor where a tied LM head on the same rank takes it in.
  bool tp_embedding_grad_whole = false;
  // Megatron's local (non-Transformer Engine) attention computes the s×s scores into its global
  // memory buffer ("mpu", megatron/core/utils.py GlobalMemoryBuffer), which grows to one layer's
  // b·(a/t)·s² scores and is never freed. Only without flash attention.
  bool attention_scores_buffer = false;
  // Megatron's mixed-precision optimizers hand the optimizer an fp32 copy of gradients kept
  // below fp32 (main_grad.float(): --fp16 without --accumulate-allreduce-grads-in-fp32), 4 B per
  // parameter the rank updates, alive from the optimizer step to the next step's zero_grad.
  bool fp32_grad_copy = false;
};

// Offload (docs/offload.md): where the optimizer's states, the parameters and the stored
// activations live when not on the GPU. kCpu: pinned host memory; kNvme: an NVMe swap file
// (DeepSpeed ZeRO-Infinity), with pinned host buffers staging it.
enum class OffloadTier { kNone, kCpu, kNvme };
inline constexpr std::array<const char*, 3> kOffloadTierNames = {"none", "cpu", "nvme"};
inline const char* offload_tier_name(OffloadTier t) {
  return kOffloadTierNames[static_cast<size_t>(t)];
}
struct Offload {
  // DeepSpeed zero_optimization.offload_optimizer.device (ZeRO 1-3), FSDP CPUOffload with the
  // optimizer stepping on the CPU shards, Megatron --optimizer-cpu-offload.
  OffloadTier optimizer = OffloadTier::kNone;
  // DeepSpeed zero_optimization.offload_param.device (ZeRO-3), FSDP
  // CPUOffload(offload_params=True) / FSDP2 CPUOffloadPolicy.
  OffloadTier params = OffloadTier::kNone;
  // Share of the optimizer's parameters whose states go to the host (Megatron
  // --optimizer-offload-fraction, DeepSpeed offload_optimizer.ratio). 1 = all.
  double optimizer_fraction = 1.0;
  // Saved activations copied to pinned host memory in the forward and back in the backward
  // (torchtune enable_activation_offloading, Megatron fine-grained activation offloading).
  bool activations = false;
  bool any() const {
    return optimizer != OffloadTier::kNone || params != OffloadTier::kNone || activations;
  }
};

struct Scenario {
  ModelConfig model;
  Training training;
  Finetune finetune;
  Parallelism parallel;
  Overheads overheads;
  Conventions conventions;
  Offload offload;
  Images images;          // per sequence (--images, --image-size): multimodal models only
  int framework_id = -1;  // vramplan::Framework the conventions came from; -1 = none (generic)
};

// Conventions::attention_scores_buffer applies: the scores are materialised.
inline bool has_attention_scores_buffer(const Scenario& s) {
  return s.conventions.attention_scores_buffer && !s.training.flash_attention;
}

// Conventions::fp32_grad_copy applies: gradients are accumulated below fp32 and an fp32 master
// copy is updated from them.
inline bool has_fp32_grad_copy(const Scenario& s) {
  const Training& t = s.training;
  return s.conventions.fp32_grad_copy && t.master_weights && !t.fp32_grad_accumulation &&
         t.grad_dtype != DType::kFp32;
}

// Transformer Engine's grouped GEMM keeps one cuBLAS workspace per compute stream
// (transformer_engine/pytorch/module/base.py get_multi_stream_cublas_workspace: 4 streams,
// 32 MiB each on Hopper and newer), allocated by the first grouped GEMM and held through the
// caching allocator: only ranks that hold an MoE layer have them.
inline constexpr int64_t kGroupedGemmStreams = 4;
inline constexpr int64_t kGroupedGemmWorkspaceBytes = 32ll << 20;
inline int64_t grouped_gemm_workspace_bytes(const Training& t, bool rank_has_moe_layer) {
  return t.moe_grouped_gemm && rank_has_moe_layer ? kGroupedGemmStreams * kGroupedGemmWorkspaceBytes
                                                  : 0;
}

// Whether attention holds K and V twice (Conventions::mha_keeps_packed_qkv): only standard MHA
// attention takes the packed Q|K|V path.
inline bool holds_kv_twice(const Scenario& s) {
  const ModelConfig& m = s.model;
  return s.conventions.mha_keeps_packed_qkv && m.attention == AttentionKind::kStandard &&
         m.num_kv_heads == m.num_heads;
}

// Whether a pipeline stage keeps its FSDP parameters and gradients unsharded through the step
// (Conventions::pipeline_fsdp_unsharded); `params_sharded` is Sharding::params.
inline bool keeps_stage_unsharded(const Conventions& c, const Parallelism& p, bool params_sharded) {
  return c.pipeline_fsdp_unsharded && p.pp > 1 && params_sharded;
}

// The vocabulary as the framework allocates it: V rounded up to vocab_pad_multiple · tp.
inline int64_t padded_vocab(const Scenario& s) {
  const int64_t multiple = s.conventions.vocab_pad_multiple * s.parallel.tp;
  return (s.model.vocab + multiple - 1) / multiple * multiple;
}

}  // namespace vramplan
