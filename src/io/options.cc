#include "vramplan/io/options.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace vramplan {
namespace {

using K = OptionKind;

// The names of import_formats() (vramplan/interop/import.h; options_test.cc checks they agree).
constexpr const char* kImportFormatNames =
    "megatron-yaml, megatron-recipe, torchtitan, torchtitan-command, megatron-overrides, megatron, "
    "vllm, sglang, torchtune, axolotl, accelerate, deepspeed, hf-trainer";

// The training scenario: `estimate`, `roofline`, `plan`, POST /api/estimate and /api/sweep.
constexpr OptionSpec kOptions[] = {
    // Input
    {"from", K::kText, "input", "",
     "read the run from your framework's own config or command line (a Megatron-LM launch script "
     "or argument list, a Megatron functional-test YAML, ...; docs/importers.md); the CLI takes a "
     "path (- for standard input), the API the text itself; settings given beside it win",
     ""},
    {"from_format", K::kChoice, "input", "detected from the text", "the format of --from",
     kImportFormatNames},
    {"from_files", K::kObject, "input", "",
     "the files the --from text names but does not hold ({name: text}: a DeepSpeed JSON, an "
     "accelerate config, a torchtitan job TOML); the CLI reads them beside the --from file",
     ""},
    // Model
    {"model", K::kText, "model", "",
     "preset name (see `vramplan models`), Hub id such as meta-llama/Llama-3.1-8B, or a path to a "
     "config.json",
     ""},
    {"model_config", K::kObject, "model", "",
     "a config.json object given inline (API and scenario files)", ""},
    {"hidden_size", K::kInteger, "model", "from the model", "hidden size h", ""},
    {"num_layers", K::kInteger, "model", "from the model", "decoder layers L", ""},
    {"num_heads", K::kInteger, "model", "from the model", "attention heads a", ""},
    {"num_kv_heads", K::kInteger, "model", "num_heads", "key/value heads g (GQA)", ""},
    {"head_dim", K::kInteger, "model", "hidden_size/num_heads", "head dimension d", ""},
    {"ffn_size", K::kInteger, "model", "from the model", "dense MLP intermediate size f", ""},
    {"vocab_size", K::kInteger, "model", "from the model", "vocabulary size V", ""},
    {"tied_embeddings", K::kBool, "model", "from the model",
     "input embedding and LM head share weights", ""},
    {"num_experts", K::kInteger, "moe", "from the model", "routed experts E (0 = dense)", ""},
    {"top_k", K::kInteger, "moe", "from the model", "experts per token k", ""},
    {"expert_ffn_size", K::kInteger, "moe", "from the model", "intermediate size of one expert",
     ""},
    {"shared_experts", K::kInteger, "moe", "from the model", "always-active shared experts", ""},
    {"shared_expert_ffn_size", K::kInteger, "moe", "expert_ffn_size",
     "intermediate size of one shared expert", ""},
    // Training
    {"seq_len", K::kInteger, "training", "4096", "sequence length s in tokens", ""},
    {"images", K::kInteger, "training", "0",
     "images per sequence (multimodal models): the vision encoder's activations, and their "
     "tokens within seq_len",
     ""},
    {"image_size", K::kText, "training", "the tower's own size, or 1024x1024",
     "WIDTHxHEIGHT of each image in pixels, as the model's processor sizes it", ""},
    {"micro_batch", K::kInteger, "training", "1", "sequences per microbatch b", ""},
    {"global_batch", K::kInteger, "training", "micro_batch·dp (·2·pp with pipelining)",
     "sequences per optimizer step; sets the microbatch count", ""},
    {"grad_accum", K::kInteger, "training", "global_batch/(micro_batch·dp)",
     "gradient accumulation steps (microbatches per optimizer step on each data-parallel rank, "
     "HF gradient_accumulation_steps): sets global_batch = micro_batch·grad_accum·dp",
     ""},
    {"recompute", K::kChoice, "training", "none",
     "activation recomputation: selective recomputes attention (Megatron), selective-op keeps "
     "every other matmul output (torchtitan's op-level policy), full keeps layer inputs",
     "none, selective, full, selective-op"},
    {"recompute_layers", K::kInteger, "training", "0 (all)",
     "with full recompute: layers per pipeline stage (per chunk) recomputed, the rest stored", ""},
    {"flash_attention", K::kBool, "training", "true", "fused/flash attention (no s×s scores kept)",
     ""},
    {"dropout", K::kBool, "training", "false", "dropout on (masks kept for backward)", ""},
    {"moe_grouped_gemm", K::kBool, "training", "false",
     "MoE experts as grouped GEMMs (Megatron --moe-grouped-gemm, Transformer Engine): 4 more "
     "32 MiB cuBLAS workspaces on ranks holding an MoE layer",
     ""},
    // Fine-tuning (finetune.h)
    {"finetune", K::kChoice, "training", "none",
     "fine-tuning method: none (every unfrozen weight trains), lora, qlora (NF4 base, paged 8-bit "
     "AdamW)",
     "none, lora, qlora"},
    {"lora_rank", K::kInteger, "training", "16", "LoRA rank r", ""},
    {"lora_targets", K::kText, "training", "q,v",
     "projections with adapters: attention, mlp, all-linear, or a list of q,k,v,o,gate,up,down "
     "(MLA: q_a,q_b,kv_a,kv_b; PEFT module names too, matched by name as PEFT does)",
     ""},
    {"adapter_dtype", K::kChoice, "training", "bf16", "dtype of the LoRA adapters",
     "fp32, bf16, fp16, fp8, fp4"},
    {"freeze_embeddings", K::kBool, "training", "false",
     "input embedding frozen (LoRA/QLoRA freeze every base weight anyway)", ""},
    {"freeze_first_layers", K::kInteger, "training", "0",
     "first N decoder layers frozen (no gradients, no optimizer state)", ""},
    // Precision and optimizer
    {"param_dtype", K::kChoice, "precision", "bf16", "dtype of the weights used in compute",
     "fp32, bf16, fp16, fp8, fp4"},
    {"grad_dtype", K::kChoice, "precision", "bf16", "dtype gradients are produced in",
     "fp32, bf16, fp16, fp8, fp4"},
    {"fp32_grad_accum", K::kBool, "precision", "true",
     "accumulate gradients in an fp32 buffer (Megatron main_grad)", ""},
    {"reduce_dtype", K::kChoice, "precision", "fp32",
     "dtype of the data-parallel gradient reduction", "fp32, bf16, fp16, fp8, fp4"},
    {"master_weights", K::kBool, "precision", "true",
     "keep fp32 master weights when params are below fp32", ""},
    {"optimizer", K::kChoice, "precision", "adamw", "optimizer",
     "adamw, adam8bit, sgd, sgd-momentum, adafactor, lion, muon"},
    {"optimizer_dtype", K::kChoice, "precision", "fp32", "dtype of optimizer states",
     "fp32, bf16, fp16, fp8, fp4"},
    {"activation_dtype", K::kChoice, "precision", "bf16", "dtype of stored activations",
     "fp32, bf16, fp16, fp8, fp4"},
    {"fp8", K::kChoice, "precision", "none",
     "FP8 linear layers with a Transformer Engine recipe (Megatron --fp8-recipe): each decoder "
     "linear saves its input in fp8 and caches fp8 casts of its weight",
     "none, delayed, tensorwise, blockwise, mxfp8"},
    {"fp8_params", K::kBool, "precision", "false",
     "fp8 primary weights (Megatron --fp8-param-gather): decoder linear weights stored in fp8", ""},
    // Parallelism
    {"gpus", K::kInteger, "parallelism", "tp·pp·cp·dp",
     "world size; dp is derived from it when not given", ""},
    {"tp", K::kInteger, "parallelism", "1", "tensor-parallel degree", ""},
    {"sequence_parallel", K::kBool, "parallelism", "true",
     "sequence parallelism with TP (Korthikanti et al.)", ""},
    {"loss_parallel", K::kBool, "parallelism", "true",
     "with TP, the loss on vocabulary shards (Megatron, torchtitan's default); false: the LM "
     "head's output is gathered and every TP rank holds the full-vocabulary logits and loss "
     "(torchtitan disable_loss_parallel, transformers' tp_plan)",
     ""},
    {"pp", K::kInteger, "parallelism", "1", "pipeline-parallel stages", ""},
    {"vpp", K::kInteger, "parallelism", "1", "virtual stages (model chunks) per pipeline rank", ""},
    {"schedule", K::kChoice, "parallelism", "1f1b (interleaved when vpp > 1)", "pipeline schedule",
     "1f1b, interleaved, gpipe"},
    {"dp", K::kInteger, "parallelism", "1 (or gpus/(tp·pp·cp))", "data-parallel degree", ""},
    {"cp", K::kInteger, "parallelism", "1", "context-parallel degree (splits the sequence)", ""},
    {"ep", K::kInteger, "parallelism", "1", "expert-parallel degree", ""},
    {"etp", K::kInteger, "parallelism", "1", "expert tensor-parallel degree", ""},
    {"zero", K::kInteger, "parallelism", "0", "DeepSpeed ZeRO stage 0-3", ""},
    {"fsdp", K::kChoice, "parallelism", "none", "PyTorch FSDP sharding strategy",
     "none, full_shard, shard_grad_op, hybrid_shard, no_shard"},
    {"fsdp_shard_group", K::kInteger, "parallelism", "dp·cp",
     "ranks per shard group with hybrid_shard", ""},
    {"fsdp_prefetch", K::kInteger, "parallelism", "1", "FSDP/ZeRO-3 units all-gathered ahead", ""},
    {"distributed_optimizer", K::kBool, "parallelism", "false",
     "Megatron distributed optimizer: optimizer state and master weights sharded over dp·cp", ""},
    // Offload (docs/offload.md)
    {"offload_optimizer", K::kChoice, "offload", "none",
     "where the optimizer states, fp32 master weights and fp32 gradients live: cpu (DeepSpeed "
     "ZeRO-Offload with zero 1-3, FSDP CPU offload, Megatron --optimizer-cpu-offload with the "
     "distributed optimizer) or nvme (ZeRO-Infinity, zero 3)",
     "none, cpu, nvme"},
    {"offload_params", K::kChoice, "offload", "none",
     "where the sharded parameters live between uses: cpu (DeepSpeed offload_param, FSDP "
     "CPUOffload(offload_params=True)) or nvme (ZeRO-Infinity); needs zero 3 or a sharding fsdp",
     "none, cpu, nvme"},
    {"optimizer_offload_fraction", K::kNumber, "offload", "1",
     "share of the optimizer offloaded, the rest stepping on the GPU (Megatron "
     "--optimizer-offload-fraction, DeepSpeed offload_optimizer.ratio with zero 3)",
     ""},
    {"offload_activations", K::kBool, "offload", "false",
     "saved activations go to pinned host memory in the forward and come back for the backward "
     "(torchtune enable_activation_offloading, Megatron fine-grained activation offloading); "
     "the GPU keeps two layers' worth",
     ""},
    {"first_stage_layers", K::kInteger, "parallelism", "even split",
     "decoder layers on the first pipeline stage", ""},
    {"last_stage_layers", K::kInteger, "parallelism", "even split",
     "decoder layers on the last pipeline stage", ""},
    {"pipeline_layout", K::kText, "parallelism", "a split",
     "every stage's layers in Megatron's --pipeline-model-parallel-layout syntax: pp·vpp stages "
     "separated by |, E embedding, t decoder layer, m MTP layer, L loss, (…)*n and x*n repeat "
     "(e.g. Et|(tt|)*30mL); sets vpp",
     ""},
    {"embedding_stage", K::kBool, "parallelism", "false (true: torchtitan)",
     "count the embedding as one layer of the pipeline split", ""},
    {"loss_stage", K::kBool, "parallelism", "false (true: torchtitan)",
     "count the LM head and loss as one layer of the pipeline split", ""},
    // Hardware and overheads
    {"pipeline_split", K::kChoice, "parallelism", "even (balanced: torchtitan, compute: nanotron)",
     "how layers are split over pp·vpp: evenly (an error when they do not divide), balanced "
     "(the remainder spread over the first stages) or compute (nanotron's split by compute "
     "cost, the LM head counted as V·h); any split setting replaces a framework's split",
     "even, balanced, compute"},
    {"framework", K::kChoice, "framework", "none",
     "training framework whose conventions to apply (fp32 grad buffers, DDP bucket copies, loss "
     "copies of the logits, pipeline split, allocator pool; docs/frameworks.md); explicit "
     "settings still win in estimate, while plan searches only layouts the framework runs",
     "megatron, torchtitan, deepspeed, nanotron, hf-trainer"},
    {"model_code", K::kChoice, "framework", "default (transformers: deepspeed, hf-trainer)",
     "whose code computes the layers: the framework's own kernels, or Hugging Face "
     "transformers' eager modeling code (fp32 RMSNorm upcasts kept, F.cross_entropy on fp32 "
     "logits; docs/frameworks.md#model-code), or torchtune's modules (fp32 F.rms_norm, K/V "
     "repeated to every head, chunked cross-entropy); applied after the framework",
     "default, transformers, torchtune"},
    // Single conventions (Conventions in scenario.h), over the framework's
    {"vocab_pad_multiple", K::kInteger, "framework", "1 (128: megatron)",
     "the vocabulary is padded to a multiple of this × tp (Megatron "
     "--make-vocab-size-divisible-by)",
     ""},
    {"loss_bytes_per_logit", K::kInteger, "framework",
     "6 (10: nanotron, torchtitan; 12: model_code transformers, deepspeed, hf-trainer)",
     "bytes per logit alive at the loss, forward or backward: logits plus the loss's fp32 copies "
     "and gradients (Megatron's --cross-entropy-loss-fusion keeps 10)",
     ""},
    {"loss_chunks", K::kInteger, "framework", "0 (8: model_code torchtune)",
     "the loss upcasts its logits in this many chunks, one at a time (torchtune's "
     "CEWithChunkedOutputLoss num_output_chunks): the chunk in hand's fp32 copy is alive beside "
     "the kept bytes; 0 = not chunked",
     ""},
    {"gated_mlp_tensors", K::kInteger, "framework",
     "3 (4: nanotron, torchtitan, model_code transformers, deepspeed, hf-trainer)",
     "f-wide tensors a gated MLP keeps per token: 3 fused SwiGLU, 4 unfused", ""},
    {"lazy_gradients", K::kBool, "framework", "false (true: torchtitan, hf-trainer)",
     "gradients set to None after each step instead of a persistent buffer", ""},
    {"fsdp_mixed_precision", K::kBool, "framework", "false (true: torchtitan)",
     "FSDP all-gathers the compute dtype and reduce-scatters in the reduce dtype", ""},
    {"fsdp_root_unit", K::kBool, "framework", "false (true: hf-trainer)",
     "FSDP wraps only the decoder layers and the root: the embedding, final norm and LM head stay "
     "gathered (the root is never resharded after forward) through forward and backward",
     ""},
    {"zero3_live_params", K::kInteger, "framework", "0 (1,000,000,000: deepspeed)",
     "ZeRO-3 parameters kept gathered (DeepSpeed stage3_max_live_parameters); 0 keeps only the "
     "unit in use and the prefetched ones",
     ""},
    {"comm_bucket_elements", K::kInteger, "framework", "0 (500,000,000: deepspeed)",
     "DeepSpeed ZeRO's reduce/all-gather bucket in elements of the gradient dtype (your config's "
     "reduce_bucket_size); 0: no bucket",
     ""},
    {"optimizer_foreach_temporaries", K::kBool, "framework", "false",
     "torch's foreach (non-fused) AdamW allocates a state-sized temporary during the step (HF "
     "optim adamw_torch); fused AdamW (adamw_torch_fused, the Trainer's default with torch >= "
     "2.8; DeepSpeed's) does not",
     ""},
    {"pipeline_keeps_stage_outputs", K::kBool, "framework",
     "false (true: nanotron, torchtitan, deepspeed)",
     "the pipeline engine keeps what a stage sent until its backward", ""},
    {"pipeline_keeps_last_outputs", K::kBool, "framework", "false (true: torchtitan)",
     "the last pipeline stage keeps every microbatch's output (the logits) until the next step "
     "(torch.distributed.pipelining PipelineStage.output_chunks)",
     ""},
    {"tp_embedding_grad_whole", K::kBool, "framework", "false (true: torchtitan)",
     "with tp > 1 and unsharded gradients, the input embedding's gradient is whole (V·h) on every "
     "TP rank until the optimizer step (DTensor has no vocabulary-sharded embedding backward)",
     ""},
    {"mha_keeps_packed_qkv", K::kBool, "framework", "false",
     "with MHA, the packed Q|K|V buffer stays alive beside the K|V copy flash attention saves", ""},
    {"sp_saves_gathered_inputs", K::kBool, "framework", "false (true: torchtitan)",
     "with sequence parallelism, column-parallel linears save their all-gathered input "
     "(torchtitan's TP plan, nanotron tp_recompute_allgather: false) instead of the sequence "
     "shard",
     ""},
    {"tp_comm_overlap", K::kBool, "framework", "false",
     "step time: TP all-gathers and reduce-scatters overlap the layer's TP GEMMs (Transformer "
     "Engine userbuffers, Megatron --tp-comm-overlap; torchtitan async TP); only what outlasts "
     "the GEMMs is exposed",
     ""},
    {"ep_comm_overlap", K::kBool, "framework", "false",
     "step time: the expert all-to-all of one microbatch overlaps another's compute (Megatron "
     "--overlap-moe-expert-parallel-comm, combined 1F1B; Megatron-Bridge moe_a2a_overlap)",
     ""},
    {"moe_dispatcher", K::kChoice, "framework", "alltoall",
     "step time: how MoE tokens reach other expert-parallel ranks: alltoall (one copy per chosen "
     "expert; Megatron alltoall, torchtitan), allgather (every token to every rank; Megatron's "
     "default), deepep or hybridep (Megatron flex: one copy per destination rank in a node, one "
     "per destination node across nodes)",
     "alltoall, allgather, deepep, hybridep"},
    {"tp_allgather_buffer", K::kBool, "framework", "false (true: nanotron)",
     "a persistent n·h buffer for the sequence-parallel all-gathers (nanotron MemoryBuffer)", ""},
    {"pipeline_fsdp_unsharded", K::kBool, "framework", "false (true: torchtitan)",
     "with pp > 1, FSDP keeps each stage's parameters gathered and accumulates unsharded "
     "gradients in the reduce dtype until the last microbatch's backward "
     "(torch.distributed.pipelining with FSDP2)",
     ""},
    {"attention_scores_buffer", K::kBool, "framework", "false",
     "without flash attention, one layer's s×s scores stay in a persistent global buffer "
     "(Megatron --transformer-impl local: GlobalMemoryBuffer \"mpu\")",
     ""},
    {"fp32_grad_copy", K::kBool, "framework", "false (true: megatron)",
     "gradients kept below fp32 are copied to fp32 for the optimizer step and kept until the "
     "next zero_grad (Megatron's main_grad.float(), --fp16)",
     ""},
    {"gpu", K::kText, "hardware", "h100-80gb",
     "GPU to fit on (see `vramplan gpus`); every catalog GPU is listed too", ""},
    {"gpu_memory_gib", K::kNumber, "hardware", "", "fit on a GPU of this many GiB instead", ""},
    {"host_memory_gib", K::kNumber, "hardware", "the GPU's typical node (catalog host_memory_gib)",
     "host RAM of one node, for the host-memory fit of offloaded rows", ""},
    {"cuda_context_gib", K::kNumber, "overheads", "0.586 (600 MiB)",
     "CUDA context and kernels per GPU", ""},
    {"nccl_gib_per_group", K::kNumber, "overheads", "0.5",
     "NCCL buffers per parallel group of size > 1", ""},
    {"gemm_workspace_mib", K::kNumber, "overheads", "64",
     "cuBLAS/cuBLASLt (and Transformer Engine) GEMM workspaces per GPU, in MiB", ""},
    {"allocator_overhead", K::kNumber, "overheads", "0.10",
     "caching-allocator pool above peak allocated (fraction)", ""},
    {"cuda_graphs", K::kBool, "overheads", "false",
     "per-layer CUDA graphs (Megatron --cuda-graph-impl): their pools keep the layers' forward "
     "temporaries, about 20% of the activations, reserved; the step time replays each layer as "
     "graph launches (dropless routed experts stay eager)",
     ""},
};

constexpr const char* kFormats =
    "fp32, bf16, fp16, fp8, fp8-channel, fp8-block, int8, int4, nf4, mxfp4, nvfp4";

// Serving beside the model keys: `infer` and POST /api/infer.
constexpr OptionSpec kServingOptions[] = {
    // Serving
    {"context", K::kInteger, "serving", "max_position_embeddings",
     "tokens per sequence (vLLM --max-model-len)", ""},
    {"batch", K::kInteger, "serving", "1", "concurrent sequences of --context tokens", ""},
    {"images", K::kInteger, "serving", "0",
     "images per request (multimodal models; vLLM --limit-mm-per-prompt): their tokens within "
     "--context, the vision encoder's profile run, mllama's cross-attention KV",
     ""},
    {"image_size", K::kText, "serving", "the tower's own size, or 1024x1024",
     "WIDTHxHEIGHT of each image in pixels, as the model's processor sizes it", ""},
    {"kv_dtype", K::kChoice, "serving", "auto (the weights' dtype)", "KV cache dtype",
     "auto, bf16, fp16, fp32, fp8, int8, int4"},
    {"block_size", K::kInteger, "serving", "16 (vLLM), 1 (SGLang)", "paged KV block in tokens", ""},
    // Weights
    {"weight_dtype", K::kChoice, "weights", "from config.json (torch_dtype, quantization_config)",
     "format of the linear layers (attention, MLP, experts); a float dtype sets every weight",
     kFormats},
    {"attention_dtype", K::kChoice, "weights", "weight_dtype", "format of the attention linears",
     kFormats},
    {"mlp_dtype", K::kChoice, "weights", "weight_dtype",
     "format of the dense MLP and shared experts", kFormats},
    {"experts_dtype", K::kChoice, "weights", "weight_dtype", "format of the routed experts",
     kFormats},
    {"embedding_dtype", K::kChoice, "weights", "the model dtype", "format of the input embedding",
     kFormats},
    {"lm_head_dtype", K::kChoice, "weights", "the model dtype", "format of the LM head", kFormats},
    {"quant_group_size", K::kInteger, "weights", "128 (or the config's)",
     "int4 (AWQ/GPTQ) group size along the input", ""},
    {"nf4_double_quant", K::kBool, "weights", "true",
     "nf4 with double-quantised absmax (QLoRA's 4.127 bits)", ""},
    {"dtype", K::kChoice, "weights", "auto (config.json's torch_dtype; fp32 served as bf16)",
     "the model dtype (vLLM / SGLang --dtype): unquantised weights, activations and the auto KV "
     "cache; quantised weights keep their format",
     "auto, fp32, bf16, fp16"},
    {"quantization", K::kText, "weights", "the checkpoint's quantization_config",
     "vLLM / SGLang --quantization: on a checkpoint without a quantization_config, fp8 quantises "
     "the linear layers at load time (per-tensor scales) and bitsandbytes to 4 bits; a quantised "
     "checkpoint keeps its own format",
     ""},
    // Parallelism
    {"tp", K::kInteger, "parallelism", "1", "tensor-parallel degree", ""},
    {"pp", K::kInteger, "parallelism", "1", "pipeline-parallel stages", ""},
    {"ep", K::kInteger, "parallelism", "1",
     "expert-parallel degree (routed experts split over ep GPUs; divides tp·dp)", ""},
    {"dp", K::kInteger, "parallelism", "1", "data-parallel replicas (vLLM --data-parallel-size)",
     ""},
    // Engine
    {"engine", K::kChoice, "engine", "vllm (sglang with --mem-fraction-static)",
     "whose memory conventions to follow", "vllm, sglang"},
    {"gpu_memory_utilization", K::kNumber, "engine", "",
     "vLLM: fraction of the GPU it may use; reports max KV tokens and sequences", ""},
    {"mem_fraction_static", K::kNumber, "engine", "",
     "SGLang: fraction of free memory for weights + KV pool; reports max KV tokens", ""},
    {"max_num_batched_tokens", K::kInteger, "engine", "8192 (2048 below 70 GiB or on A100)",
     "tokens of the prefill chunk the engine profiles", ""},
    {"max_num_seqs", K::kInteger, "engine", "1024 (256 below 70 GiB or on A100)",
     "sequences the engine's profile samples for", ""},
    {"sampler_bytes_per_logit", K::kNumber, "engine", "38",
     "bytes alive per logit at the sampler's peak", ""},
    {"cuda_graphs", K::kBool, "engine", "true", "CUDA graphs captured (false = --enforce-eager)",
     ""},
    {"cuda_graph_gib", K::kNumber, "engine", "0.5", "memory of the captured CUDA graphs", ""},
    {"cuda_graph_in_budget", K::kBool, "engine", "false",
     "subtract CUDA graph memory from the KV budget (vLLM with "
     "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1)",
     ""},
    // Hardware and overheads
    {"gpu", K::kText, "hardware", "h100-80gb", "GPU to fit on (see `vramplan gpus`)", ""},
    {"gpu_memory_gib", K::kNumber, "hardware", "",
     "a GPU of this many GiB instead (e.g. the total vLLM logs)", ""},
    {"cuda_context_gib", K::kNumber, "overheads", "0.586 (600 MiB)",
     "CUDA context per GPU (outside the engine's budget)", ""},
    {"nccl_gib_per_group", K::kNumber, "overheads", "0.5",
     "NCCL buffers per parallel group of size > 1", ""},
    {"non_torch_gib", K::kNumber, "overheads", "0.13",
     "memory outside PyTorch that the engine's profile sees grow (kernels, cuBLAS)", ""},
    // Offload and host memory (docs/offload.md, "Serving")
    {"cpu_offload_gib", K::kNumber, "offload", "0",
     "GiB of decoder-layer weights per GPU kept in pinned CPU memory and read in every forward "
     "(vLLM / SGLang --cpu-offload-gb)",
     ""},
    {"swap_space_gib", K::kNumber, "offload", "0 (vLLM V1 allocates none)",
     "vLLM --swap-space: CPU swap space per GPU for preempted sequences' KV blocks (V0)", ""},
    {"kv_offload_gib", K::kNumber, "offload", "0",
     "vLLM --kv-offloading-size: KV cache offloaded to CPU memory, GiB summed over the tp·pp "
     "GPUs (native OffloadingConnector or LMCache's local CPU backend)",
     ""},
    {"enable_hierarchical_cache", K::kBool, "offload", "false",
     "SGLang --enable-hierarchical-cache: a host KV pool behind the GPU's (HiCache)", ""},
    {"hicache_ratio", K::kNumber, "offload", "2",
     "SGLang --hicache-ratio: host pool tokens = ratio × the GPU pool's", ""},
    {"hicache_size_gb", K::kNumber, "offload", "0 (the ratio)",
     "SGLang --hicache-size: host pool in GB (10^9 bytes) per GPU, instead of the ratio", ""},
    {"host_memory_gib", K::kNumber, "offload", "the GPU's typical node (catalog host_memory_gib)",
     "host RAM of one node, for the host-memory fit of the offload rows", ""},
};

const std::vector<OptionSpec>& serving_settings() {
  static const std::vector<OptionSpec> options = [] {
    std::vector<OptionSpec> out;
    for (const OptionSpec& o : kOptions) {
      const std::string group = o.group;
      if (group == "input" || group == "model" || group == "moe") out.push_back(o);
    }
    out.insert(out.end(), std::begin(kServingOptions), std::end(kServingOptions));
    return out;
  }();
  return options;
}

// The planner's own, beside the training scenario: `plan` and POST /api/plan.
constexpr OptionSpec kPlanOptions[] = {
    {"gpus_per_node", K::kInteger, "plan", "from the GPU catalog (8)",
     "GPUs per node: tensor parallelism stays inside one by default", ""},
    {"max_tp", K::kInteger, "plan", "gpus_per_node", "largest tensor-parallel degree to consider",
     ""},
    {"headroom", K::kNumber, "plan", "0.1", "fraction of usable GPU memory kept free", ""},
    {"top", K::kInteger, "plan", "5", "layouts to show", ""},
    {"threads", K::kInteger, "plan", "0 (all cores)", "search threads", ""},
    {"space", K::kInteger, "plan", "0 (not collected)",
     "the space of fitting layouts for a chart: every Pareto-optimal layout (peak memory vs "
     "tokens/s) plus up to this many others, thinned on a grid (docs/planner.md)",
     ""},
    {"offload_search", K::kChoice, "plan", "auto",
     "auto: when no layout fits, search again with the optimizer, parameters and activations "
     "offloaded; never: do not",
     "auto, never"},
    {"host_link_gbps", K::kNumber, "plan", "from the GPU catalog",
     "GPU-to-host link (PCIe x16, NVLink-C2C), GB/s one direction: offload transfers", ""},
    {"host_memory_gbps", K::kNumber, "plan", "from the GPU catalog",
     "the node's DRAM bandwidth, GB/s (all sockets): the CPU optimizer step under offload", ""},
    {"nvme_gbps", K::kNumber, "plan", "25 (an assumption)",
     "the node's NVMe bandwidth, GB/s (DeepSpeed's ds_nvme_tune measures it): NVMe offload", ""},
};

// The quick calculator (docs/quick.md): `quick` and POST /api/quick.
constexpr OptionSpec kQuickOptions[] = {
    {"example", K::kChoice, "quick", "",
     "start from a shipped scenario (`vramplan quick --list-examples`); settings given beside it "
     "win",
     "medium-training, serving, large-finetune"},
    {"params", K::kText, "quick", "", "parameter count P: 700M, 1.3B, 1300M or a plain number", ""},
    {"layers", K::kInteger, "quick", "", "decoder layers L", ""},
    {"hidden", K::kInteger, "quick", "", "hidden size h", ""},
    {"batch", K::kInteger, "quick", "1", "sequences per step (training) or in flight (serving) b",
     ""},
    {"seq_len", K::kInteger, "quick", "2048", "tokens per sequence s", ""},
    {"mode", K::kChoice, "quick", "training",
     "training keeps gradients, optimizer states and every layer's activations; inference one "
     "layer's activations and the KV cache",
     "training, inference"},
    {"weight_dtype", K::kChoice, "quick", "bf16", "format of the weights",
     "fp32, bf16, fp16, fp8, int8, int4, nf4, mxfp4, nvfp4"},
    {"grad_dtype", K::kChoice, "quick", "bf16", "dtype of the gradients",
     "fp32, bf16, fp16, fp8, fp4"},
    {"activation_dtype", K::kChoice, "quick", "bf16", "dtype of the activations",
     "fp32, bf16, fp16, fp8, fp4"},
    {"optimizer_dtype", K::kChoice, "quick", "fp32", "dtype of the optimizer states",
     "fp32, bf16, fp16, fp8, fp4"},
    {"master_weights", K::kBool, "quick", "true",
     "fp32 master weights in training when the weights are below fp32", ""},
    {"optimizer", K::kChoice, "quick", "adamw", "optimizer",
     "adamw, adam8bit, sgd, sgd-momentum, adafactor, lion, muon"},
    {"activation_multiplier", K::kNumber, "quick",
     "what vramplan keeps per layer of the matching architecture",
     "tensors of h values each token keeps per layer (docs/quick.md)", ""},
    {"checkpoint_factor", K::kNumber, "quick", "1",
     "share of the activations kept with checkpointing (1: none; 1/m keeps only layer inputs)", ""},
    {"kv_cache", K::kBool, "quick", "false (true: inference)", "count a KV cache", ""},
    {"cache_tokens", K::kInteger, "quick", "seq_len", "tokens per sequence in the KV cache", ""},
    {"kv_dtype", K::kChoice, "quick", "activation_dtype", "dtype of the KV cache",
     "fp32, bf16, fp16, fp8, fp4"},
    {"overhead_gib", K::kNumber, "quick", "0.586 (600 MiB)", "CUDA context and kernels per GPU",
     ""},
    {"allocator_overhead", K::kNumber, "quick", "0.10",
     "caching-allocator pool above the tensors (fraction)", ""},
};

// The training estimate's output, beside the scenario: `estimate`, POST /api/estimate and the
// Python package's estimate() (io/estimate_request.cc reads it).
constexpr OptionSpec kEstimateOutputOptions[] = {
    {"formulas", K::kBool, "input", "true",
     "write every row's formula with its values filled in, and its source; false leaves both "
     "empty (every number stays): the planner's fast path, for sweeps that need only the bytes",
     ""},
};

// The roofline's cluster, beside the training scenario: `roofline` and POST /api/roofline. Each
// defaults to the catalog entry of the chosen GPU (perf/step_time.h default_cluster).
constexpr OptionSpec kRooflineOptions[] = {
    {"gpus_per_node", K::kInteger, "cluster", "from the GPU catalog (8)",
     "GPUs per node (NVLink domain)", ""},
    {"intra_node_gbps", K::kNumber, "cluster", "from the GPU catalog",
     "NVLink/NVSwitch bandwidth per GPU, GB/s, one direction", ""},
    {"inter_node_gbps", K::kNumber, "cluster", "from the GPU catalog",
     "network bandwidth per GPU, GB/s, one direction (8×400 Gb/s per 8-GPU node = 50)", ""},
    {"host_link_gbps", K::kNumber, "cluster", "from the GPU catalog",
     "GPU-to-host link (PCIe x16, NVLink-C2C), GB/s one direction: offload transfers", ""},
    {"host_memory_gbps", K::kNumber, "cluster", "from the GPU catalog",
     "the node's DRAM bandwidth, GB/s (all sockets): the CPU optimizer step under offload", ""},
    {"nvme_gbps", K::kNumber, "cluster", "25 (an assumption)",
     "the node's NVMe bandwidth, GB/s (DeepSpeed's ds_nvme_tune measures it): NVMe offload", ""},
};

// The "what fits" questions (docs/fit.md), beside the scenario and planner keys: `fit` and
// POST /api/fit.
constexpr OptionSpec kFitOptions[] = {
    {"question", K::kChoice, "fit", "",
     "what to find: the largest micro_batch, seq_len or global_batch that fits the layout, or "
     "the smallest number of gpus with a layout that fits",
     "micro_batch, seq_len, global_batch, gpus"},
    {"up_to", K::kInteger, "fit", "the largest the estimate takes (GPUs: 16384)",
     "the largest value to consider (a cap: micro-batch, tokens, sequences or GPUs)", ""},
    {"seq_multiple", K::kInteger, "fit", "1",
     "seq_len answers are multiples of this (and of 2·cp with context parallelism, tp·cp with "
     "sequence parallelism)",
     ""},
};

struct GroupTitle {
  std::string_view group, title;
};
constexpr GroupTitle kGroupTitles[] = {{"input", "Input and output"},
                                       {"model", "Model"},
                                       {"moe", "Mixture of experts"},
                                       {"training", "Training"},
                                       {"precision", "Precision and optimizer"},
                                       {"parallelism", "Parallelism and sharding"},
                                       {"serving", "Serving"},
                                       {"weights", "Weight formats"},
                                       {"engine", "Engine (vLLM / SGLang)"},
                                       {"offload", "Offload and host memory"},
                                       {"hardware", "GPU"},
                                       {"overheads", "Memory beyond tensors"},
                                       {"plan", "Planner"},
                                       {"fit", "What fits"},
                                       {"quick", "Quick calculator"}};

}  // namespace

std::span<const OptionSpec> scenario_options() { return kOptions; }
std::span<const OptionSpec> inference_options() { return serving_settings(); }
std::span<const OptionSpec> plan_options() { return kPlanOptions; }
std::span<const OptionSpec> fit_options() { return kFitOptions; }
std::span<const OptionSpec> quick_options() { return kQuickOptions; }
std::span<const OptionSpec> roofline_options() { return kRooflineOptions; }
std::span<const OptionSpec> estimate_output_options() { return kEstimateOutputOptions; }

std::string_view group_title(std::string_view group) {
  for (const GroupTitle& g : kGroupTitles)
    if (g.group == group) return g.title;
  return group;
}

const OptionSpec* find_option(std::span<const OptionSpec> options, std::string_view key) {
  for (const OptionSpec& o : options)
    if (key == o.key) return &o;
  return nullptr;
}

std::string flag_name(const std::string& key) {
  std::string flag = "--" + key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

}  // namespace vramplan
