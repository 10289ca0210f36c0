// The quick calculator's data (POST /api/quick, GET /api/quick/options; docs/quick.md): the
// answer's shape, the request body the form's inputs make, and the API calls. The numbers shown
// are the answer's own: nothing is computed here.

import type { ApiError, OptionSpec, Scenario } from '../../types';

export interface QuickRow {
  component: string;
  bytes: number;
  counts_toward: string;
  formula: string;
  source: string;
}

export interface QuickFull {
  model: string;
  command: string;
  parameters: number;
  total_bytes: number;
  allocated_bytes: number;
  rows: { component: string; bytes: number; counts_toward: string }[];
  settings: Scenario;
}

export interface QuickAnswer {
  example: string | null;
  inputs: Record<string, unknown>;
  activation_multiplier: { value: number; source: string };
  rows: QuickRow[];
  total_bytes: number;
  calculator_gib: number | null;
  full_estimate: QuickFull | null;
  notes: string[];
}

export interface QuickExample {
  name: string;
  title: string;
  settings: Scenario;
  calculator_gib: number;
}

export interface QuickOptions {
  options: OptionSpec[];
  examples: QuickExample[];
}

export type QuickResult = { ok: true; value: QuickAnswer } | { ok: false; error: ApiError };

/** The inputs in the order of the form: the sizes first, then precision, then the rest. */
export const MAIN_KEYS = ['params', 'layers', 'hidden', 'batch', 'seq_len', 'mode'];

/**
 * The request body: the example (if one is picked) and every input the user filled in, as typed;
 * the core reads text as well as numbers and names a bad value in its error.
 */
export function quickBody(example: string, values: Record<string, string>): Scenario {
  const body: Scenario = {};
  if (example) body.example = example;
  for (const [key, value] of Object.entries(values)) if (value.trim() !== '') body[key] = value;
  return body;
}

/** The example's settings as the form's text values. */
export function exampleValues(example: QuickExample | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!example) return out;
  for (const [key, value] of Object.entries(example.settings)) out[key] = String(value);
  return out;
}

async function call<T>(path: string, init: RequestInit = {}): Promise<T | { error: ApiError }> {
  const response = await fetch(path, init);
  const body = (await response.json()) as T | { error: ApiError };
  if (!response.ok && !(body as { error?: ApiError }).error)
    throw new Error(`${path}: HTTP ${response.status}`);
  return body;
}

export const quickApi = {
  options: async (): Promise<QuickOptions> => {
    const body = await call<QuickOptions>('/api/quick/options');
    if ('error' in body) throw new Error(body.error.message);
    return body;
  },
  run: async (body: Scenario, signal?: AbortSignal): Promise<QuickResult> => {
    const answer = await call<QuickAnswer>('/api/quick', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    return 'error' in answer ? { ok: false, error: answer.error } : { ok: true, value: answer };
  },
};
