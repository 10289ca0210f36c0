// How the training inputs are named and grouped on screen. Keys come from GET /api/options; an
// option missing here still appears, under its own group, labelled from its key.

import type { FormLayout } from '../../form/layout';
import { resolvedValue } from './resolved';

export const GROUP_TITLES: Record<string, string> = {
  model: 'Model',
  moe: 'Mixture of experts',
  precision: 'Precision and optimizer',
  training: 'Training',
  parallelism: 'Parallelism',
  hardware: 'GPU',
  offload: 'Offload and host memory',
  framework: 'Framework',
  overheads: 'Framework and overheads',
};

/** Order of the form's sections; groups not listed follow in the order the API gives. */
export const GROUP_ORDER = [
  'model',
  'moe',
  'precision',
  'training',
  'parallelism',
  'offload',
  'hardware',
  'framework',
  'overheads',
];

/** Parallelism has many inputs; sub-headings follow the way people name the dimensions. */
export const SUBGROUPS: Record<string, string> = {
  gpus: 'World size and data parallelism',
  dp: 'World size and data parallelism',
  tp: 'Tensor parallelism',
  sequence_parallel: 'Tensor parallelism',
  pp: 'Pipeline parallelism',
  vpp: 'Pipeline parallelism',
  schedule: 'Pipeline parallelism',
  pipeline_split: 'Pipeline parallelism',
  first_stage_layers: 'Pipeline parallelism',
  last_stage_layers: 'Pipeline parallelism',
  embedding_stage: 'Pipeline parallelism',
  loss_stage: 'Pipeline parallelism',
  cp: 'Context parallelism',
  ep: 'Expert parallelism',
  etp: 'Expert parallelism',
  zero: 'Sharding: ZeRO, FSDP, distributed optimizer',
  fsdp: 'Sharding: ZeRO, FSDP, distributed optimizer',
  fsdp_shard_group: 'Sharding: ZeRO, FSDP, distributed optimizer',
  fsdp_prefetch: 'Sharding: ZeRO, FSDP, distributed optimizer',
  distributed_optimizer: 'Sharding: ZeRO, FSDP, distributed optimizer',
};

export const SUBGROUP_ORDER = [
  'World size and data parallelism',
  'Tensor parallelism',
  'Pipeline parallelism',
  'Context parallelism',
  'Expert parallelism',
  'Sharding: ZeRO, FSDP, distributed optimizer',
];

export const LABELS: Record<string, string> = {
  model: 'Preset',
  model_config: 'config.json',
  hidden_size: 'Hidden size',
  num_layers: 'Layers',
  num_heads: 'Attention heads',
  num_kv_heads: 'KV heads',
  head_dim: 'Head dimension',
  ffn_size: 'MLP intermediate size',
  vocab_size: 'Vocabulary size',
  tied_embeddings: 'Tied embeddings',
  num_experts: 'Routed experts',
  top_k: 'Experts per token (top-k)',
  expert_ffn_size: 'Expert intermediate size',
  shared_experts: 'Shared experts',
  shared_expert_ffn_size: 'Shared expert intermediate size',
  seq_len: 'Sequence length',
  micro_batch: 'Micro-batch size',
  global_batch: 'Global batch size',
  grad_accum: 'Gradient accumulation steps',
  recompute: 'Activation recomputation',
  recompute_layers: 'Recomputed layers per stage',
  flash_attention: 'Flash attention',
  dropout: 'Dropout',
  moe_grouped_gemm: 'MoE grouped GEMM (Transformer Engine)',
  param_dtype: 'Parameter dtype',
  grad_dtype: 'Gradient dtype',
  fp32_grad_accum: 'FP32 gradient accumulation',
  reduce_dtype: 'Gradient reduction dtype',
  master_weights: 'FP32 master weights',
  optimizer: 'Optimizer',
  optimizer_dtype: 'Optimizer state dtype',
  activation_dtype: 'Activation dtype',
  fp8: 'FP8 recipe (Transformer Engine)',
  fp8_params: 'FP8 primary weights',
  gpus: 'GPUs (world size)',
  tp: 'Tensor parallel (TP)',
  sequence_parallel: 'Sequence parallel (SP)',
  pp: 'Pipeline parallel (PP)',
  vpp: 'Virtual stages per rank (VPP)',
  schedule: 'Pipeline schedule',
  dp: 'Data parallel (DP)',
  cp: 'Context parallel (CP)',
  ep: 'Expert parallel (EP)',
  etp: 'Expert tensor parallel (ETP)',
  zero: 'ZeRO stage',
  fsdp: 'FSDP sharding',
  fsdp_shard_group: 'FSDP shard group size',
  fsdp_prefetch: 'FSDP/ZeRO-3 prefetched units',
  distributed_optimizer: 'Distributed optimizer (Megatron)',
  first_stage_layers: 'Layers on first stage',
  last_stage_layers: 'Layers on last stage',
  embedding_stage: 'Embedding counts as a layer',
  loss_stage: 'LM head and loss count as a layer',
  pipeline_split: 'Uneven layer split',
  gpu: 'GPU',
  gpu_memory_gib: 'Other GPU capacity (GiB)',
  host_memory_gib: 'Node host RAM (GiB)',
  offload_optimizer: 'Offload optimizer states',
  offload_params: 'Offload parameters',
  optimizer_offload_fraction: 'Optimizer share offloaded',
  offload_activations: 'Offload activations',
  cuda_context_gib: 'CUDA context (GiB)',
  nccl_gib_per_group: 'NCCL buffers per group (GiB)',
  gemm_workspace_mib: 'GEMM workspaces (MiB)',
  allocator_overhead: 'Allocator pool overhead (fraction)',
  cuda_graphs: 'Per-layer CUDA graphs',
  loss_bytes_per_logit: 'Bytes per logit at the loss',
  loss_chunks: 'Loss chunks (chunked cross-entropy)',
  gated_mlp_tensors: 'Gated-MLP tensors kept',
  lazy_gradients: 'Lazily allocated gradients',
  fsdp_mixed_precision: 'FSDP mixed precision',
  fsdp_root_unit: 'FSDP root holds embedding + head',
  pipeline_keeps_stage_outputs: 'Pipeline keeps sent outputs',
  tp_embedding_grad_whole: 'TP embedding gradient whole (DTensor)',
  mha_keeps_packed_qkv: 'MHA keeps packed Q|K|V buffer',
  sp_saves_gathered_inputs: 'SP linears save gathered inputs',
  tp_allgather_buffer: 'Persistent TP all-gather buffer',
  tp_comm_overlap: 'TP communication overlap (step time)',
  ep_comm_overlap: 'EP all-to-all overlap, combined 1F1B (step time)',
  moe_dispatcher: 'MoE token dispatcher (step time)',
  pipeline_fsdp_unsharded: 'PP stages keep FSDP unsharded',
  attention_scores_buffer: 'Persistent attention-scores buffer',
  fp32_grad_copy: 'fp32 gradient copy at the step',
  zero3_live_params: 'ZeRO-3 live parameters (DeepSpeed)',
  comm_bucket_elements: 'ZeRO reduce bucket (elements)',
  optimizer_foreach_temporaries: 'Foreach AdamW step temporary',
  framework: 'Training framework',
};

export function labelFor(key: string): string {
  if (LABELS[key]) return LABELS[key];
  const words = key.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function groupTitle(group: string): string {
  return GROUP_TITLES[group] ?? labelFor(group);
}

/** The CLI flag of an option key: seq_len -> --seq-len. */
export function cliFlag(key: string): string {
  return `--${key.replace(/_/g, '-')}`;
}

export const TRAINING_LAYOUT: FormLayout = {
  ariaLabel: 'Training scenario',
  groupOrder: GROUP_ORDER,
  groupOf: (option) => option.group,
  groupTitle,
  labelFor,
  subgroups: { parallelism: { of: SUBGROUPS, order: SUBGROUP_ORDER } },
  folded: new Set(['overheads']),
  resolved: resolvedValue,
};
