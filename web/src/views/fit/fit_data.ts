// The "what fits" view's data (POST /api/fit; docs/fit.md): the answer's shape, the request body
// the form's inputs make, and the words shown. The numbers are the answer's own: nothing is
// computed here.

import type { ApiError, Scenario } from '../../types';

export interface FitPoint {
  value: number;
  fits: boolean;
  allocated_bytes: number;
  reserved_bytes: number;
  device_bytes: number;
  host_bytes: number;
  peak_stage: string;
  micro_batch: number;
  microbatches: number;
  global_batch: number;
  seq_len: number;
  in_flight_microbatches: number;
  invalid: string;
}

export interface FitCount {
  gpus: number;
  fits: boolean;
  layouts: number;
  layout: string;
  device_bytes: number;
  reason: string;
}

export interface FitAnswer {
  question: FitQuestion;
  model: string;
  gpu: { id: string; name: string; usable_bytes: number };
  headroom: number;
  limit_bytes: number;
  fits: boolean;
  value: number | null;
  unbounded: boolean;
  step: number;
  up_to: number;
  bounded_by: string;
  at: FitPoint | null;
  next: FitPoint | null;
  miss_bytes: number | null;
  limiting: string;
  note: string;
  evaluated: number;
  seconds: number;
  scenario: Scenario | null;
  micro_batch: number;
  microbatches: number;
  counts?: FitCount[];
  layout?: string | null;
}

export type FitResult = { ok: true; value: FitAnswer } | { ok: false; error: ApiError };

export type FitQuestion = 'micro_batch' | 'seq_len' | 'global_batch' | 'gpus';

export const QUESTIONS: { value: FitQuestion; label: string }[] = [
  { value: 'micro_batch', label: 'the largest micro-batch' },
  { value: 'seq_len', label: 'the largest sequence length' },
  { value: 'global_batch', label: 'the largest global batch' },
  { value: 'gpus', label: 'the smallest GPU count' },
];

export interface FitField {
  key: string;
  label: string;
  help: string;
  choices?: string[];
}

/** The form's inputs after the question, model and GPU: empty ones are not sent. */
export const FIELDS: FitField[] = [
  { key: 'seq_len', label: 'Sequence length', help: 'tokens per sequence (default 4096)' },
  { key: 'micro_batch', label: 'Micro-batch', help: 'sequences per microbatch (default 1)' },
  { key: 'global_batch', label: 'Global batch', help: 'sequences per step (gpus: required)' },
  { key: 'tp', label: 'TP', help: 'tensor parallel (gpus: fixed when given)' },
  { key: 'pp', label: 'PP', help: 'pipeline stages' },
  { key: 'cp', label: 'CP', help: 'context parallel' },
  { key: 'dp', label: 'DP', help: 'data parallel' },
  { key: 'zero', label: 'ZeRO', help: 'sharding stage', choices: ['0', '1', '2', '3'] },
  {
    key: 'recompute',
    label: 'Recompute',
    help: 'activation recomputation',
    choices: ['none', 'selective', 'full'],
  },
  { key: 'up_to', label: 'Up to', help: 'the largest value to consider (a cap)' },
  { key: 'seq_multiple', label: 'Seq multiple', help: 'seq_len answers on multiples of this' },
  { key: 'headroom', label: 'Headroom', help: 'fraction of usable memory kept free (0.1)' },
];

/** The setting each question searches: its input is not sent (the server refuses it). */
export function searchedKey(question: string): string | null {
  if (question === 'micro_batch' || question === 'seq_len' || question === 'global_batch')
    return question;
  return null;
}

/** The request body: the question, model, GPU and every other input filled in, as typed. */
export function fitBody(values: Record<string, string>): Scenario {
  const body: Scenario = {};
  const question = values.question ?? 'micro_batch';
  const searched = searchedKey(question);
  for (const [key, value] of Object.entries(values)) {
    if (value.trim() === '' || key === searched) continue;
    if (key === 'seq_multiple' && question !== 'seq_len') continue;
    body[key] = value.trim();
  }
  return body;
}

export function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
}

const NAMES: Record<FitQuestion, string> = {
  micro_batch: 'micro-batch',
  seq_len: 'sequence length',
  global_batch: 'global batch',
  gpus: 'GPUs',
};

/** The headline: "Largest micro-batch that fits: 6", "Nothing fits." ... */
export function headline(a: FitAnswer): string {
  if (!a.fits) return 'Nothing fits.';
  if (a.unbounded)
    return `Memory does not bound the global batch (micro-batch ${a.micro_batch}; the peak stops growing at ${a.value})`;
  if (a.question === 'gpus')
    return `Smallest GPU count with a layout that fits: ${a.value}${a.layout ? ` (${a.layout})` : ''}`;
  return `Largest ${NAMES[a.question]} that fits: ${a.value}`;
}

/** "micro-batch 7 does not fit: 73.02 GiB, 1.10 GiB over the limit" (null when there is none). */
export function missText(a: FitAnswer): string | null {
  if (!a.next || a.next.invalid !== '' || a.miss_bytes === null) return null;
  const which =
    a.question === 'gpus' ? `${a.next.value} GPUs` : `${NAMES[a.question]} ${a.next.value}`;
  return `${which} does not fit: ${gib(a.next.device_bytes)}, ${gib(a.miss_bytes)} over the limit`;
}

export async function postFit(body: Scenario, signal?: AbortSignal): Promise<FitResult> {
  const response = await fetch('/api/fit', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  const answer = (await response.json()) as FitAnswer | { error: ApiError };
  if ('error' in answer) {
    const e = answer.error;
    const message =
      e.message ??
      `${e.field} = ${e.value}${e.reason ? `: ${e.reason}` : ''}${e.accepted ? `; accepted: ${e.accepted}` : ''}`;
    return { ok: false, error: { ...e, message } };
  }
  if (!response.ok) throw new Error(`/api/fit: HTTP ${response.status}`);
  return { ok: true, value: answer };
}
