// How the serving inputs (GET /api/infer/options) are named and grouped on screen. The model and
// MoE fields are the training view's; the serving ones are regrouped the way people tune a
// deployment: layout, context and batch, formats, engine, GPU.

import type { FormLayout } from '../../form/layout';
import type { OptionSpec } from '../../types';
import { labelFor as trainingLabel } from '../training/labels';
import { resolvedInferenceValue } from './resolved';

const GROUP_TITLES: Record<string, string> = {
  model: 'Model',
  moe: 'Mixture of experts',
  parallelism: 'Parallelism',
  workload: 'Context and batch',
  formats: 'Weight and KV cache formats',
  engine: 'Engine (vLLM / SGLang)',
  offload: 'Offload and host memory',
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
  'offload',
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
  dtype: 'Whole model',
  quantization: 'Whole model',
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
  dtype: 'Model dtype (engine --dtype)',
  quantization: 'Quantise at load (engine --quantization)',
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
  cpu_offload_gib: 'Weights offloaded to CPU per GPU (GiB, --cpu-offload-gb)',
  swap_space_gib: 'CPU swap space per GPU (GiB, vLLM --swap-space)',
  kv_offload_gib: 'KV cache offloaded to CPU (GiB over tp·pp, vLLM --kv-offloading-size)',
  enable_hierarchical_cache: 'Hierarchical cache (SGLang HiCache)',
  hicache_ratio: 'HiCache host pool ÷ GPU pool',
  hicache_size_gb: 'HiCache host pool per GPU (GB)',
  host_memory_gib: 'Node RAM (GiB)',
};

export function inferenceLabel(key: string): string {
  return LABELS[key] ?? trainingLabel(key);
}

function groupTitle(group: string): string {
  return GROUP_TITLES[group] ?? inferenceLabel(group);
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
