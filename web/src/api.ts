// The vramplan HTTP API (`vramplan serve`), same origin as the page.

import { NO_FORMATS, type EmittedConfig, type FormatLists } from './form/config_io';
import type {
  ApiError,
  Estimate,
  Gpu,
  HubModel,
  InferenceEstimate,
  OptionSpec,
  Preset,
  Scenario,
} from './types';

export type ApiResult<T> = { ok: true; value: T } | { ok: false; error: ApiError };

/** Thrown for answers that are not the API's own (server down, proxy page, bad JSON). */
export class TransportError extends Error {}

async function call<T>(path: string, init: RequestInit = {}): Promise<ApiResult<T>> {
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (init.signal?.aborted) throw error;
    throw new TransportError(`cannot reach the vramplan server (${String(error)})`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new TransportError(`${path}: HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (response.ok) return { ok: true, value: body as T };
  const error = (body as { error?: Partial<ApiError> })?.error;
  if (error && typeof error === 'object') return { ok: false, error: normaliseError(error) };
  throw new TransportError(`${path}: HTTP ${response.status}: ${text.slice(0, 200)}`);
}

function normaliseError(error: Partial<ApiError>): ApiError {
  const field = error.field ?? '';
  const value = error.value ?? '';
  const accepted = error.accepted ?? '';
  const reason = error.reason ?? '';
  const message =
    error.message ??
    `${field} = ${value}${reason ? `: ${reason}` : ''}${accepted ? `; accepted: ${accepted}` : ''}`;
  return { field, value, accepted, reason, message };
}

function postJson(body: unknown, signal?: AbortSignal): RequestInit {
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  };
}

async function getList<T>(path: string, listKey: string): Promise<T[]> {
  const result = await call<unknown>(path);
  if (!result.ok) throw new TransportError(`${path}: ${result.error.message}`);
  return unwrapList<T>(result.value, listKey);
}

/** Lists come either bare or wrapped in an object ({"options": [...]}); accept both. */
export function unwrapList<T>(body: unknown, listKey: string): T[] {
  if (Array.isArray(body)) return body as T[];
  const inner = (body as Record<string, unknown> | null)?.[listKey];
  if (Array.isArray(inner)) return inner as T[];
  throw new TransportError(`expected a list of ${listKey}`);
}

/** A settings list and the formats its endpoints read and write ({"options", "formats"}). */
export interface OptionsAndFormats {
  options: OptionSpec[];
  formats: FormatLists;
}

async function optionsAndFormats(path: string): Promise<OptionsAndFormats> {
  const result = await call<unknown>(path);
  if (!result.ok) throw new TransportError(`${path}: ${result.error.message}`);
  return {
    options: unwrapList<OptionSpec>(result.value, 'options'),
    formats: formatsOf(result.value),
  };
}

/** The "formats" of an options answer; none from a server that lists none. */
export function formatsOf(body: unknown): FormatLists {
  const formats = (body as { formats?: Partial<FormatLists> } | null)?.formats;
  if (!formats || typeof formats !== 'object') return NO_FORMATS;
  return {
    from: Array.isArray(formats.from) ? formats.from : [],
    emit: Array.isArray(formats.emit) ? formats.emit : [],
  };
}

export const api = {
  options: () => optionsAndFormats('/api/options'),
  models: () => getList<Preset>('/api/models', 'models'),
  gpus: () => getList<Gpu>('/api/gpus', 'gpus'),
  modelConfig: async (name: string): Promise<unknown> => {
    const result = await call<unknown>(`/api/models/${encodeURIComponent(name)}`);
    if (!result.ok) throw new TransportError(result.error.message);
    return result.value;
  },
  estimate: (scenario: Scenario, signal?: AbortSignal) =>
    call<Estimate>('/api/estimate', postJson(scenario, signal)),
  sweep: (body: SweepRequest, signal?: AbortSignal) =>
    call<unknown>('/api/sweep', postJson(body, signal)),
  plan: <T>(settings: Scenario, signal?: AbortSignal) =>
    call<T>('/api/plan', postJson(settings, signal)),
  /** `vramplan roofline --format json` for the training settings and the cluster keys. */
  roofline: <T>(settings: Scenario, signal?: AbortSignal) =>
    call<T>('/api/roofline', postJson(settings, signal)),
  inferOptions: () => optionsAndFormats('/api/infer/options'),
  infer: (scenario: Scenario, signal?: AbortSignal) =>
    call<InferenceEstimate>('/api/infer', postJson(scenario, signal)),
  /** The run as a framework's config or command line: POST `path` with "emit". */
  emit: (path: '/api/estimate' | '/api/infer' | '/api/plan', body: Scenario) =>
    call<EmittedConfig>(path, postJson(body)),
  /** What the Hub holds for org/name[@revision]; errors (403, 404, 502, 504...) as ApiResult. */
  hubModel: (id: string, signal?: AbortSignal) => call<HubModel>(hubPath(id), { signal }),
};

/** /api/hub/org/name@rev with each part percent-encoded but the slashes kept. */
export function hubPath(id: string): string {
  return `/api/hub/${id.split('/').map(encodeURIComponent).join('/')}`;
}

export interface SweepRequest {
  scenario: Scenario;
  vary: string;
  values: number[];
}
