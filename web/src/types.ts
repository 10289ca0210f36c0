// Shapes of the vramplan HTTP API (same objects as `vramplan estimate --format json`).

import type { ImportedConfig } from './form/config_io';

export type OptionKind = 'integer' | 'number' | 'bool' | 'text' | 'choice' | 'object';

/** One scenario input, as GET /api/options lists it (the CLI's option table). */
export interface OptionSpec {
  key: string;
  /** The CLI flag, e.g. --seq-len. */
  flag?: string;
  kind: OptionKind;
  group: string;
  default: string;
  help: string;
  choices: string[];
}

export interface Preset {
  name: string;
  hub_id?: string;
  model_type?: string;
  /** Exact parameter counts. */
  total?: number;
  active?: number;
}

export interface Gpu {
  id: string;
  name: string;
  nominal_bytes?: number;
  usable_bytes: number;
}

export type CountsToward = 'allocated' | 'reserved' | 'device' | 'host' | 'disk';

/** Rows off the GPU (offload): they count toward the node's RAM or an NVMe swap. */
export function offGpu(c: CountsToward): boolean {
  return c === 'host' || c === 'disk';
}

export interface Row {
  component: string;
  bytes: number;
  counts_toward: CountsToward;
  formula: string;
  source: string;
  /** Uncertainty band (training rows): where the measured value fell for 80% of validated runs. */
  bytes_low?: number;
  bytes_high?: number;
}

/** One phase of a training step and what is allocated in it. */
export interface Phase {
  name: string;
  allocated_bytes: number;
}

export interface Stage {
  name: string;
  ranks: number[];
  layers: number;
  layer_ids: number[];
  in_flight_microbatches: number;
  rows: Row[];
  allocated_bytes: number;
  reserved_bytes: number;
  device_bytes: number;
  /** One rank's host memory and NVMe swap (offload rows). */
  host_bytes?: number;
  disk_bytes?: number;
  phases?: Phase[];
  peak_phase?: string;
}

export interface Peak {
  stage: string;
  stage_index?: number;
  /** The phase of the step in which the peak stage peaks (e.g. "optimizer step"). */
  phase?: string;
  allocated_bytes: number;
  reserved_bytes: number;
  device_bytes: number;
  allocated_bytes_low?: number;
  allocated_bytes_high?: number;
  reserved_bytes_low?: number;
  reserved_bytes_high?: number;
  device_bytes_low?: number;
  device_bytes_high?: number;
  host_bytes?: number;
  disk_bytes?: number;
}

export interface Fit {
  gpu: string;
  name?: string;
  nominal_bytes?: number;
  usable_bytes: number;
  used_fraction: number;
  verdict: 'fits' | 'tight' | 'oom' | string;
  /** The node's host-memory check; null where the node's RAM is not known. */
  host?: HostFit | null;
}

export interface HostFit {
  gpus_per_node: number;
  node_bytes: number;
  memory_bytes: number;
  used_fraction: number;
  verdict: 'fits' | 'tight' | 'oom' | string;
}

export interface Parameters {
  total: number;
  active: number;
  embedding?: number;
  lm_head?: number;
  mtp?: number;
  breakdown: { name: string; count: number }[];
}

export interface Estimate {
  parameters: Parameters;
  stages: Stage[];
  peak: Peak;
  fit: Fit[];
  warnings: string[];
  scenario: Record<string, unknown>;
  world_size?: number;
  microbatches?: number;
  /** Present when the model came from the Hugging Face Hub. */
  checkpoint?: Checkpoint;
  /** Present when the request read a pasted config ("from"). */
  imported?: ImportedConfig;
}

/** What a Hub repository's safetensors store (or why that is unknown). */
export interface Checkpoint {
  available: boolean;
  reason?: string;
  source?: string;
  repo?: string;
  commit?: string;
  files?: number;
  total_bytes?: number;
  dtypes?: Record<string, number> | null;
  params?: number | null;
}

/** GET /api/hub/{org}/{name}[@revision]: what the server fetched for a Hub id. */
export interface HubModel {
  model: string;
  commit: string;
  config: Record<string, unknown> | null;
  parameters: { total: number; active: number } | null;
  model_error: ApiError | null;
  checkpoint: Checkpoint | null;
  notes: string[];
}

/** The engine's capacity answer: how many KV tokens fit at a memory fraction. */
export interface Capacity {
  engine: string;
  fraction: number;
  total_bytes: number;
  requested_bytes: number;
  kv_budget_bytes: number;
  shortfall_bytes: number;
  num_blocks: number;
  max_kv_tokens: number;
  max_sequences: number;
  formula: string;
  source: string;
}

/** One pipeline rank of a serving estimate. */
export interface InferenceRank {
  rank: number;
  name?: string;
  layers: number;
  weights_bytes: number;
  kv_bytes_per_token: number;
  kv_bytes_per_sequence: number;
  activation_bytes: number;
  device_bytes: number;
  max_kv_tokens?: number | null;
}

/** One tier of the KV cache on one GPU: the GPU pool or a host pool behind it. */
export interface KvTier {
  tier: string;
  bytes: number;
  tokens: number;
  formula: string;
  source: string;
}

/** POST /api/infer: the same object as `vramplan infer --format json`. */
export interface InferenceEstimate {
  parameters: { total: number; active: number };
  binding_rank: number;
  rows: Row[];
  ranks: InferenceRank[];
  weights_bytes: number;
  kv_bytes_per_token: number;
  kv_bytes_per_sequence: number;
  kv_cache_bytes: number;
  activation_bytes: number;
  allocated_bytes: number;
  reserved_bytes: number;
  device_bytes: number;
  /** Pinned host memory of one GPU's process: the offload rows (docs/offload.md, "Serving"). */
  host_bytes?: number;
  /** The KV cache's tiers: the GPU pool first, then the host pools, with their tokens. */
  kv_tiers?: KvTier[];
  max_kv_tokens: number | null;
  max_sequences: number | null;
  capacity: Capacity | null;
  fit: Fit[];
  warnings: string[];
  scenario: Record<string, unknown>;
  checkpoint?: Checkpoint;
  imported?: ImportedConfig;
}

/** The core's error: the field, the value, what is accepted, why, and a ready message. */
export interface ApiError {
  field: string;
  value: string;
  accepted: string;
  reason: string;
  message: string;
}

/** A scenario as the API takes it: option keys (CLI names with underscores) to values. */
export type Scenario = Record<string, unknown>;
