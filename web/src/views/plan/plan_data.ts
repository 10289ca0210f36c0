// The plan view's pure parts: which inputs it has, turning them into /api/plan settings, and
// how a candidate's numbers are written. Kept apart from the DOM so Vitest can check them.

import type { ImportedConfig } from '../../form/config_io';
import { coerce, toText } from '../../scenario';
import { gibFixed, groupDigits, percent } from '../../format';
import type { OptionKind, Scenario } from '../../types';
import type { PlanSpace } from './space_data';

/** One input of the plan form; `key` is the /api/plan setting (CLI flag with underscores). */
export interface PlanField {
  key: string;
  label: string;
  kind: OptionKind;
  help: string;
  /** For kind 'choice': the values offered besides "any" (an empty value, searched). */
  choices?: string[];
  /** For kind 'choice': what the empty value means, when not "any (searched)". */
  unset?: string;
  /** Set in a new view; the user can clear it. */
  initial?: string;
}

export const MAIN_FIELDS: PlanField[] = [
  { key: 'model', label: 'Model', kind: 'choice', help: 'a preset (GET /api/models)' },
  {
    key: 'gpus',
    label: 'GPUs',
    kind: 'integer',
    help: 'GPUs to split (required; the server takes up to 4096)',
    initial: '16',
  },
  { key: 'gpu', label: 'GPU type', kind: 'choice', help: 'from the GPU catalog' },
  {
    key: 'framework',
    label: 'Framework',
    kind: 'choice',
    help: 'its memory conventions, and only the layouts it can run (docs/frameworks.md)',
    choices: ['megatron', 'torchtitan', 'deepspeed', 'nanotron', 'hf-trainer'],
  },
  {
    key: 'gpus_per_node',
    label: 'GPUs per node',
    kind: 'integer',
    help: 'tensor parallelism stays inside one node by default (default: 8)',
  },
  {
    key: 'seq_len',
    label: 'Sequence length',
    kind: 'integer',
    help: 'tokens per sequence',
    initial: '4096',
  },
  {
    key: 'global_batch',
    label: 'Global batch',
    kind: 'integer',
    help: 'sequences per optimizer step (required)',
    initial: '64',
  },
  {
    key: 'headroom',
    label: 'Headroom',
    kind: 'number',
    help: 'fraction of usable memory kept free (default: 0.1)',
  },
  {
    key: 'max_tp',
    label: 'Max TP',
    kind: 'integer',
    help: 'largest tensor-parallel degree (default: GPUs per node)',
  },
  { key: 'top', label: 'Top K', kind: 'integer', help: 'layouts to show (default: 5)' },
  {
    key: 'offload_search',
    label: 'Offload when nothing fits',
    kind: 'choice',
    help: 'search again with the optimizer, parameters and activations offloaded (docs/offload.md)',
    choices: ['never'],
    unset: 'auto (default)',
  },
];

/** Dimensions the user may fix; empty ones are searched. */
export const FIXED_FIELDS: PlanField[] = [
  { key: 'tp', label: 'TP', kind: 'integer', help: 'tensor parallel' },
  {
    key: 'sequence_parallel',
    label: 'Sequence parallel',
    kind: 'choice',
    help: 'with TP',
    choices: ['true', 'false'],
  },
  { key: 'pp', label: 'PP', kind: 'integer', help: 'pipeline stages' },
  { key: 'cp', label: 'CP', kind: 'integer', help: 'context parallel' },
  { key: 'ep', label: 'EP', kind: 'integer', help: 'expert parallel (MoE)' },
  { key: 'dp', label: 'DP', kind: 'integer', help: 'data parallel' },
  { key: 'micro_batch', label: 'Micro-batch', kind: 'integer', help: 'sequences per micro-batch' },
  {
    key: 'recompute',
    label: 'Recompute',
    kind: 'choice',
    help: 'activation recomputation',
    choices: ['none', 'selective', 'full', 'selective-op'],
  },
  {
    key: 'zero',
    label: 'ZeRO stage',
    kind: 'choice',
    help: 'optimizer/gradient/parameter sharding',
    choices: ['0', '1', '2', '3'],
  },
  {
    key: 'offload_optimizer',
    label: 'Offload optimizer',
    kind: 'choice',
    help: 'every layout offloads the optimizer (docs/offload.md)',
    choices: ['cpu', 'nvme'],
    unset: 'only when nothing fits',
  },
  {
    key: 'offload_params',
    label: 'Offload parameters',
    kind: 'choice',
    help: 'every layout offloads the parameters (ZeRO-3, sharded FSDP)',
    choices: ['cpu', 'nvme'],
    unset: 'only when nothing fits',
  },
];

export const ALL_FIELDS = [...MAIN_FIELDS, ...FIXED_FIELDS];

/**
 * The /api/plan body from the inputs' text: empty inputs are left out (the planner's default or
 * a searched dimension); numbers are typed when clean, anything else is sent as typed so that the
 * core answers with its own error naming the field.
 */
export function planSettings(values: Record<string, string>): Scenario {
  const settings: Scenario = {};
  for (const field of ALL_FIELDS) {
    const text = (values[field.key] ?? '').trim();
    if (text === '') continue;
    const kind = field.key === 'zero' ? 'integer' : field.kind === 'choice' ? 'text' : field.kind;
    settings[field.key] =
      field.key === 'sequence_parallel' ? coerce('bool', text) : coerce(kind, text);
  }
  return settings;
}

/**
 * The settings that describe a layout (vramplan/plan/planner.h kPlanLayoutKeys): the planner
 * searches them, so a pasted config's values for them are listed as ignored, not filled in.
 */
export const SEARCHED_KEYS = new Set([
  'tp',
  'sequence_parallel',
  'pp',
  'vpp',
  'schedule',
  'dp',
  'cp',
  'ep',
  'etp',
  'zero',
  'fsdp',
  'fsdp_shard_group',
  'recompute',
  'micro_batch',
  'distributed_optimizer',
  'first_stage_layers',
  'last_stage_layers',
  'embedding_stage',
  'loss_stage',
  'pipeline_split',
  'pipeline_layout',
]);

/** The model select's entry for a model that came as a config (a pasted Megatron script's). */
export const PASTED_MODEL = '(model of the pasted config)';

/**
 * A plan's settings split for the form: the text of each plan input, and the settings it has no
 * input for ("extras": sent with every search, listed on the page, kept in the link). A model
 * given as a config selects PASTED_MODEL. Layout settings are left to the search unless `keepLayout`
 * (a shared link, where the user fixed them on purpose).
 */
export function planFromSettings(
  settings: Scenario,
  keepLayout: boolean,
): { fields: Record<string, string>; extras: Scenario } {
  const fieldKeys = new Set(ALL_FIELDS.map((f) => f.key));
  const fields: Record<string, string> = {};
  const extras: Scenario = {};
  for (const [key, value] of Object.entries(settings)) {
    if (
      value === null ||
      value === undefined ||
      key === 'from' ||
      key === 'from_format' ||
      key === 'from_files'
    )
      continue;
    if (fieldKeys.has(key) && (keepLayout || !SEARCHED_KEYS.has(key))) fields[key] = toText(value);
    else if (!SEARCHED_KEYS.has(key) || keepLayout) extras[key] = value;
  }
  if (extras.model_config !== undefined && fields.model === undefined) fields.model = PASTED_MODEL;
  return { fields, extras };
}

/**
 * The /api/plan body: the inputs' settings with the extras beside them. A config model goes only
 * while PASTED_MODEL is selected; another choice replaces it.
 */
export function planRequest(values: Record<string, string>, extras: Scenario): Scenario {
  const settings = planSettings(values);
  const rest: Scenario = { ...extras };
  if (settings.model === PASTED_MODEL) delete settings.model;
  else delete rest.model_config;
  return { ...rest, ...settings };
}

/**
 * How many of the fastest layouts "Copy as" looks through for the best one a format can express
 * (the server writes the best-ranked it can, with a note naming it when it is not the first):
 * more than the table shows, since the fastest layouts are often ones a framework cannot run as
 * written (Megatron-LM has no FSDP shard_grad_op).
 */
export const EMIT_SEARCH_TOP = 100;

/** The /api/plan body that writes the winner of `settings`' search as `format`. */
export function planEmitBody(settings: Scenario, format: string): Scenario {
  const top = typeof settings.top === 'number' ? settings.top : 0;
  return { ...settings, top: Math.max(top, EMIT_SEARCH_TOP), emit: format };
}

/** The settings a search cannot go without; a pasted config may lack them. */
const REQUIRED_KEYS = ['gpus', 'global_batch'];

/**
 * The required setting a refused search lacked (the pasted config has no GPU count or global
 * batch: the error names it with no value), or null for any other error.
 */
export function missingRequired(error: { field: string; value: string }): string | null {
  return REQUIRED_KEYS.includes(error.field) && error.value === '' ? error.field : null;
}

/** What a config model is, for the model select: "megatron_gpt, 32 layers, hidden 4096". */
export function configModelText(config: unknown): string {
  const c = (config ?? {}) as Record<string, unknown>;
  const parts = [typeof c.model_type === 'string' ? c.model_type : 'config'];
  const layers = c.num_hidden_layers ?? c.num_layers; // a config.json's, a Megatron model's
  if (layers !== undefined) parts.push(`${toText(layers)} layers`);
  if (c.hidden_size !== undefined) parts.push(`hidden ${toText(c.hidden_size)}`);
  return parts.join(', ');
}

/** The /api/plan answer, as far as the view reads it (plan_to_json's stable keys). */
export interface PlanCandidate {
  rank?: number;
  layout: string;
  /** Other layouts with the same step time and peak: one trade-off, listed once. */
  equivalents?: string[];
  peak: { stage: string; allocated_bytes: number; reserved_bytes: number; device_bytes: number };
  used_fraction?: number;
  tokens_per_s_per_gpu: number;
  mfu: number;
  step_time_s: number;
  scenario: Scenario;
  over_bytes?: number;
}

export interface PlanAnswer {
  model: string;
  gpus: number;
  gpu: { id: string; name: string; usable_bytes: number; gpus_per_node: number };
  headroom: number;
  limit_bytes: number;
  evaluated: number;
  stats: { evaluated: number; fitting: number; pruned: number; seconds: number; threads: number };
  candidates: PlanCandidate[];
  why: string;
  closest_miss: PlanCandidate | null;
  suggestions: string[];
  /** The offload pass: it ran when no layout fitted with everything on the GPU. */
  offload_search?: { ran: boolean; note: string };
  /** Present when the request read a pasted config ("from"). */
  imported?: ImportedConfig;
  /** The fitting layouts as points, when the request asked for them ("space"). */
  space?: PlanSpace | null;
}

/** Tokens per second per GPU as the CLI prints it: whole tokens with thousands separators. */
export function tokensText(tokensPerSecond: number): string {
  return groupDigits(Math.round(tokensPerSecond));
}

/** "61.2 / 71.4 GiB": the candidate's peak device memory against the planner's limit. */
export function peakText(deviceBytes: number, limitBytes: number): string {
  return `${gibFixed(deviceBytes, 1)} / ${gibFixed(limitBytes, 1)} GiB`;
}

export function stepText(seconds: number): string {
  return `${seconds.toFixed(3)} s`;
}

export function mfuText(mfu: number): string {
  return percent(mfu);
}

/** The status line after a search: how many layouts, how fast, how many fit. */
export function searchStatsText(answer: PlanAnswer): string {
  const s = answer.stats;
  return (
    `${answer.evaluated.toLocaleString('en-US')} layouts evaluated in ${s.seconds.toFixed(3)} s ` +
    `on ${s.threads} thread(s); ${s.fitting.toLocaleString('en-US')} fit.`
  );
}
