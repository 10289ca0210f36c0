// Shapes of the vramplan HTTP API (same objects as `vramplan estimate --format json`).

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

export type CountsToward = 'allocated' | 'reserved' | 'device';

export interface Row {
  component: string;
  bytes: number;
  counts_toward: CountsToward;
  formula: string;
  source: string;
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
}

export interface Peak {
  stage: string;
  stage_index?: number;
  allocated_bytes: number;
  reserved_bytes: number;
  device_bytes: number;
}

export interface Fit {
  gpu: string;
  name?: string;
  nominal_bytes?: number;
  usable_bytes: number;
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
