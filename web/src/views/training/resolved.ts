// Where a training estimate's resolved scenario (Estimate.scenario) keeps the value each training
// option sets: the form shows it in place of an unset input, the printed report lists it.

import { gibAt, lookup } from '../resolved_scenario';

/** Where the resolved scenario (Estimate.scenario) keeps the value an option sets. */
const RESOLVED_PATHS: Record<string, string> = {
  hidden_size: 'model.hidden',
  num_layers: 'model.num_layers',
  num_heads: 'model.num_heads',
  num_kv_heads: 'model.num_kv_heads',
  head_dim: 'model.head_dim',
  ffn_size: 'model.ffn',
  vocab_size: 'model.vocab',
  tied_embeddings: 'model.tied_embeddings',
  num_experts: 'model.moe.num_experts',
  top_k: 'model.moe.top_k',
  expert_ffn_size: 'model.moe.expert_ffn',
  shared_experts: 'model.moe.shared_experts',
  shared_expert_ffn_size: 'model.moe.shared_expert_ffn',
  seq_len: 'training.seq_len',
  micro_batch: 'training.micro_batch',
  global_batch: 'training.global_batch',
  recompute: 'training.recompute',
  recompute_layers: 'training.recompute_layers',
  flash_attention: 'training.flash_attention',
  dropout: 'training.dropout',
  moe_grouped_gemm: 'training.moe_grouped_gemm',
  param_dtype: 'training.param_dtype',
  grad_dtype: 'training.grad_dtype',
  fp32_grad_accum: 'training.fp32_grad_accumulation',
  reduce_dtype: 'training.reduce_dtype',
  master_weights: 'training.master_weights',
  optimizer: 'training.optimizer',
  optimizer_dtype: 'training.optimizer_state_dtype',
  activation_dtype: 'training.activation_dtype',
  fp8: 'training.fp8',
  fp8_params: 'training.fp8_params',
  gpus: 'parallel.world_size',
  tp: 'parallel.tp',
  sequence_parallel: 'parallel.sequence_parallel',
  pp: 'parallel.pp',
  vpp: 'parallel.vpp',
  schedule: 'parallel.schedule',
  dp: 'parallel.dp',
  cp: 'parallel.cp',
  ep: 'parallel.ep',
  etp: 'parallel.etp',
  zero: 'parallel.zero',
  fsdp: 'parallel.fsdp',
  fsdp_shard_group: 'parallel.fsdp_shard_group',
  fsdp_prefetch: 'parallel.fsdp_prefetch',
  distributed_optimizer: 'parallel.distributed_optimizer',
  first_stage_layers: 'parallel.first_stage_layers',
  last_stage_layers: 'parallel.last_stage_layers',
  embedding_stage: 'parallel.embedding_as_stage',
  loss_stage: 'parallel.loss_as_stage',
  pipeline_split: 'parallel.pipeline_split',
  allocator_overhead: 'overheads.allocator_fraction',
  cuda_graphs: 'overheads.per_layer_cuda_graphs',
};

const ZERO_MEANS_UNSET = new Set([
  'first_stage_layers',
  'last_stage_layers',
  'fsdp_shard_group',
  'recompute_layers',
]);

/** Options whose resolved value is stored in bytes while the option is in GiB. */
const RESOLVED_GIB: Record<string, string> = {
  cuda_context_gib: 'overheads.cuda_context_bytes',
  nccl_gib_per_group: 'overheads.nccl_bytes_per_group',
};

/**
 * The value the core used for an option, read from an estimate's resolved scenario; undefined
 * when the scenario does not report it. Shown in place of unset inputs so the user sees what
 * "default" means for this model and layout.
 */
export function resolvedValue(resolved: unknown, key: string): unknown {
  if (key in RESOLVED_PATHS) {
    const value = lookup(resolved, RESOLVED_PATHS[key]);
    // For these the core stores 0 for "not set"; the option's default text says what that means.
    return value === 0 && ZERO_MEANS_UNSET.has(key) ? undefined : value;
  }
  if (key in RESOLVED_GIB) return gibAt(resolved, RESOLVED_GIB[key]);
  return undefined;
}
