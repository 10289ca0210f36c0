// How the serving inputs (GET /api/infer/options) are named and grouped on screen. The model and
// MoE fields are the training view's; the serving ones are regrouped the way people tune a
// deployment: layout, context and batch, formats, engine, GPU.

import type { FormLayout } from '../../form';
import type { OptionSpec } from '../../types';
import { labelFor as trainingLabel } from '../training/labels';

const GROUP_TITLES: Record<string, string> = {
  model: 'Model',
  moe: 'Mixture of experts',
  parallelism: 'Parallelism',
  workload: 'Context and batch',
  formats: 'Weight and KV cache formats',
  engine: 'Engine (vLLM / SGLang)',
  hardware: 'GPU',
  overheads: 'Memory beyond tensors',
};

const GROUP_ORDER = [
  'model',
  'moe',
  'parallelism',
  'workload',
  'formats',
  'engine',
  'hardware',
  'overheads',
];

/** Serving keys shown in another section than the API's group. */
const REGROUPED: Record<string, string> = {
  context: 'workload',
  batch: 'workload',
  kv_dtype: 'formats',
  block_size: 'engine',
};

const FORMAT_SUBGROUPS: Record<string, string> = {
  weight_dtype: 'Whole model',
  kv_dtype: 'Whole model',
  attention_dtype: 'Per module class',
  mlp_dtype: 'Per module class',
  experts_dtype: 'Per module class',
  embedding_dtype: 'Per module class',
  lm_head_dtype: 'Per module class',
  quant_group_size: 'Quantisation details',
  nf4_double_quant: 'Quantisation details',
};

const ENGINE_SUBGROUPS: Record<string, string> = {
  engine: 'Memory budget',
  gpu_memory_utilization: 'Memory budget',
  mem_fraction_static: 'Memory budget',
  block_size: 'KV cache blocks and profile run',
  max_num_batched_tokens: 'KV cache blocks and profile run',
  max_num_seqs: 'KV cache blocks and profile run',
  sampler_bytes_per_logit: 'KV cache blocks and profile run',
  cuda_graphs: 'CUDA graphs',
  cuda_graph_gib: 'CUDA graphs',
  cuda_graph_in_budget: 'CUDA graphs',
};

const LABELS: Record<string, string> = {
  context: 'Context length (tokens per sequence)',
  batch: 'Concurrent sequences',
  kv_dtype: 'KV cache dtype',
  block_size: 'Paged KV block size (tokens)',
  weight_dtype: 'Weight format',
  attention_dtype: 'Attention weights',
  mlp_dtype: 'MLP weights',
  experts_dtype: 'Routed expert weights',
  embedding_dtype: 'Embedding',
  lm_head_dtype: 'LM head',
  quant_group_size: 'int4 group size',
  nf4_double_quant: 'nf4 double quantisation',
  tp: 'Tensor parallel (TP)',
  pp: 'Pipeline parallel (PP)',
  ep: 'Expert parallel (EP)',
  dp: 'Data parallel replicas (DP)',
  engine: 'Engine',
  gpu_memory_utilization: 'GPU memory utilization (vLLM)',
  mem_fraction_static: 'Static memory fraction (SGLang)',
  max_num_batched_tokens: 'Max batched tokens (prefill chunk)',
  max_num_seqs: 'Max sequences (sampler)',
  sampler_bytes_per_logit: 'Sampler bytes per logit',
  cuda_graphs: 'CUDA graphs',
  cuda_graph_gib: 'CUDA graph memory (GiB)',
  cuda_graph_in_budget: 'CUDA graphs inside the KV budget',
  non_torch_gib: 'Non-torch memory (GiB)',
};

export function inferenceLabel(key: string): string {
  return LABELS[key] ?? trainingLabel(key);
}

function groupTitle(group: string): string {
  return GROUP_TITLES[group] ?? inferenceLabel(group);
}

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

function lookup(root: unknown, path: string): unknown {
  let node = root;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** The value the core used for a serving option (null: not set, e.g. no fraction given). */
export function resolvedInferenceValue(resolved: unknown, key: string): unknown {
  if (key in RESOLVED_PATHS) {
    const value = lookup(resolved, RESOLVED_PATHS[key]);
    return value === null ? undefined : value;
  }
  if (key in RESOLVED_GIB) {
    const bytes = lookup(resolved, RESOLVED_GIB[key]);
    return typeof bytes === 'number' ? Number((bytes / 1024 ** 3).toFixed(4)) : undefined;
  }
  return undefined;
}

export const INFERENCE_LAYOUT: FormLayout = {
  ariaLabel: 'Serving scenario',
  groupOrder: GROUP_ORDER,
  groupOf: (option: OptionSpec) =>
    REGROUPED[option.key] ?? (option.group === 'weights' ? 'formats' : option.group),
  groupTitle,
  labelFor: inferenceLabel,
  subgroups: {
    formats: {
      of: FORMAT_SUBGROUPS,
      order: ['Whole model', 'Per module class', 'Quantisation details'],
    },
    engine: {
      of: ENGINE_SUBGROUPS,
      order: ['Memory budget', 'KV cache blocks and profile run', 'CUDA graphs'],
    },
  },
  folded: new Set(['overheads']),
  resolved: resolvedInferenceValue,
};
