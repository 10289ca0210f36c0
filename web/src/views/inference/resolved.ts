// Where a serving answer's resolved scenario keeps the value each serving option sets: the form
// shows it in place of an unset input.

import { gibAt, lookup } from '../resolved_scenario';

/** Where the serving answer's resolved scenario keeps each option's value. */
const RESOLVED_PATHS: Record<string, string> = {
  tp: 'tp',
  pp: 'pp',
  ep: 'ep',
  dp: 'dp',
  context: 'context',
  batch: 'batch',
  kv_dtype: 'kv_dtype',
  block_size: 'block_size',
  engine: 'engine',
  gpu_memory_utilization: 'gpu_memory_utilization',
  mem_fraction_static: 'mem_fraction_static',
  max_num_batched_tokens: 'max_num_batched_tokens',
  max_num_seqs: 'max_num_seqs',
  sampler_bytes_per_logit: 'sampler_bytes_per_logit',
  cuda_graphs: 'cuda_graphs',
  cuda_graph_in_budget: 'cuda_graph_in_budget',
  attention_dtype: 'weights.attention.format',
  mlp_dtype: 'weights.mlp.format',
  experts_dtype: 'weights.experts.format',
  embedding_dtype: 'weights.embedding.format',
  lm_head_dtype: 'weights.lm_head.format',
};

const RESOLVED_GIB: Record<string, string> = {
  cuda_context_gib: 'overheads.cuda_context_bytes',
  nccl_gib_per_group: 'overheads.nccl_bytes_per_group',
  non_torch_gib: 'overheads.non_torch_bytes',
  cuda_graph_gib: 'overheads.cuda_graph_bytes',
};

/** The value the core used for a serving option (null: not set, e.g. no fraction given). */
export function resolvedInferenceValue(resolved: unknown, key: string): unknown {
  if (key in RESOLVED_PATHS) {
    const value = lookup(resolved, RESOLVED_PATHS[key]);
    return value === null ? undefined : value;
  }
  if (key in RESOLVED_GIB) return gibAt(resolved, RESOLVED_GIB[key]);
  return undefined;
}
