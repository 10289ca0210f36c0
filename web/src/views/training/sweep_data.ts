// The sweep's data: which inputs can vary, parsing the values typed, reading the API's answer.

import { TransportError } from '../../api';
import type { ApiError, Fit, Peak } from '../../types';

export interface SweepPoint {
  value: number;
  peak?: Pick<Peak, 'allocated_bytes' | 'reserved_bytes' | 'device_bytes'>;
  /** The core's fit verdict on the chosen GPU, when the answer carries it. */
  verdict?: string;
  error?: ApiError;
}

export const SWEEP_DEFAULTS: Record<string, number[]> = {
  seq_len: [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072],
  micro_batch: [1, 2, 4, 8, 16],
  tp: [1, 2, 4, 8],
};

export const SWEEP_LABELS: Record<string, string> = {
  seq_len: 'Sequence length',
  micro_batch: 'Micro-batch size',
  tp: 'Tensor parallel (TP)',
};

const MAX_VALUES = 32;

/** "1024, 2k, 4096" -> [1024, 2048, 4096]; a message naming the first bad entry otherwise. */
export function parseSweepValues(text: string): { values: number[] } | { error: string } {
  const parts = text.split(/[\s,;]+/).filter((p) => p !== '');
  if (parts.length === 0) return { error: 'give at least one value, e.g. 1024, 2048, 4096' };
  if (parts.length > MAX_VALUES)
    return { error: `at most ${MAX_VALUES} values (got ${parts.length})` };
  const values: number[] = [];
  for (const part of parts) {
    const match = /^(\d+)([kK]?)$/.exec(part);
    if (!match) return { error: `"${part}" is not a positive whole number` };
    const value = Number(match[1]) * (match[2] ? 1024 : 1);
    if (!Number.isSafeInteger(value) || value <= 0)
      return { error: `"${part}" is not a positive whole number` };
    values.push(value);
  }
  return { values };
}

/**
 * The API's sweep answer as points. Accepts a list at the top level or under "points"/"results";
 * each entry holds the value (as "value" or under the varied key) and a peak or an error.
 */
export function normaliseSweep(body: unknown, vary: string): SweepPoint[] {
  const record = body as Record<string, unknown> | null;
  const list = Array.isArray(body) ? body : (record?.points ?? record?.results);
  if (!Array.isArray(list)) throw new TransportError('the sweep answer holds no list of points');
  return list.map((raw) => {
    const item = raw as Record<string, unknown>;
    const value = Number(item.value ?? item[vary]);
    const error = item.error as ApiError | undefined;
    if (error)
      return {
        value,
        error: { ...error, message: error.message ?? `${error.field} = ${error.value}` },
      };
    const peak = (item.peak ?? item) as SweepPoint['peak'];
    const fit = item.fit as Fit[] | Fit | undefined;
    const verdict = (item.verdict ?? (Array.isArray(fit) ? fit[0]?.verdict : fit?.verdict)) as
      string | undefined;
    return { value, peak, verdict };
  });
}
