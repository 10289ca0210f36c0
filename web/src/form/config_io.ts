// Configs in and out, the pure part: the bodies that ask the API to read a pasted config or
// command ("from") or to write the run as one ("emit"), how an import's settings split into what a
// form shows and what it cannot, the one-line summary of an import, the file name of a written
// config, and the pasted text kept for the session. The formats themselves come from the server
// (GET /api/options and /api/infer/options: "formats"), never from a list of the app's own.

import type { Scenario } from '../types';

/** A format the server reads or writes: its --from-format / --emit name and what it is. */
export interface ConfigFormat {
  name: string;
  what: string;
}

/** The formats of one kind (training or serving): those read by "from", those written by "emit". */
export interface FormatLists {
  from: ConfigFormat[];
  emit: ConfigFormat[];
}

export const NO_FORMATS: FormatLists = { from: [], emit: [] };

/** One key of the pasted text and the setting it made: "--tensor-model-parallel-size", "2", "tp = 2". */
export interface UnderstoodKey {
  key: string;
  value: string;
  setting: string;
}

/** One key of the pasted text that set nothing, and why ("no effect on memory", "not modelled: ..."). */
export interface IgnoredKey {
  key: string;
  value: string;
  reason: string;
}

/** The answer's `imported`: what the server read from the pasted text. */
export interface ImportedConfig {
  format: string;
  /** What the text set, in the form's setting keys. */
  settings: Scenario;
  understood: UnderstoodKey[];
  ignored: IgnoredKey[];
  warnings: string[];
}

/** An "emit" answer: the run as that format's config or command line. */
export interface EmittedConfig {
  config: string;
  format: string;
  /** Plan only: why a layout other than the first was written. */
  note?: string;
}

/** Request keys that carry a pasted text: never fields of a form, never in a shared link. */
export const IMPORT_KEYS = new Set(['from', 'from_format', 'from_files']);

/** The body that reads `text` (as `format`, or detected when empty), with nothing beside it. */
export function importBody(text: string, format: string): Scenario {
  return format ? { from: text, from_format: format } : { from: text };
}

/** The body that writes `settings` as `format`. */
export function emitBody(settings: Scenario, format: string): Scenario {
  return { ...settings, emit: format };
}

/**
 * The import's settings a form can show (`known`: its keys; the model keys always) and the ones
 * it cannot, which the page lists instead of dropping them silently.
 */
export function splitImported(
  settings: Scenario,
  known: Set<string>,
): { shown: Scenario; unshown: [string, unknown][] } {
  const shown: Scenario = {};
  const unshown: [string, unknown][] = [];
  for (const [key, value] of Object.entries(settings)) {
    if (value === null || value === undefined || IMPORT_KEYS.has(key)) continue;
    if (known.has(key) || key === 'model' || key === 'model_config') shown[key] = value;
    else unshown.push([key, value]);
  }
  return { shown, unshown };
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** "Read as megatron: 28 keys understood, 14 ignored, 1 warning." */
export function importSummary(imported: ImportedConfig): string {
  const parts = [
    `${plural(imported.understood.length, 'key')} understood`,
    `${imported.ignored.length} ignored`,
  ];
  if (imported.warnings.length) parts.push(plural(imported.warnings.length, 'warning'));
  return `Read as ${imported.format}: ${parts.join(', ')}.`;
}

/**
 * The extension of a written config, from its text: JSON, a shell script (Megatron-LM launches,
 * vLLM and SGLang commands), TOML, YAML, else plain text.
 */
export function configExtension(config: string): string {
  const text = config.trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      JSON.parse(text);
      return 'json';
    } catch {
      // not JSON after all (a TOML table header starts with "[" too)
    }
  }
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const launcher = /^(torchrun|python3?|vllm|deepspeed|accelerate|srun|docker|export)\b/;
  if (text.startsWith('#!') || lines.some((l) => launcher.test(l) || l.endsWith('\\'))) return 'sh';
  if (lines.length && lines.every((l) => /^\[[^\]]+\]$/.test(l) || /^[\w."-]+\s*=\s/.test(l)))
    return 'toml';
  if (lines.length && lines.every((l) => /^(- |[\w."'-]+:(\s|$))/.test(l) || /^\s/.test(l)))
    return 'yaml';
  return 'txt';
}

/** The written config's file name: vramplan-megatron-Llama-3.1-8B.sh */
export function configFileName(format: string, model: unknown, config: string): string {
  const name = typeof model === 'string' && model !== '' ? model : 'config';
  const base = `vramplan-${format}-${name}`.replace(/[^A-Za-z0-9._-]+/g, '_');
  return `${base}.${configExtension(config)}`;
}

/** The text pasted in a view and the format chosen for it, kept for the browser tab's session. */
export interface SavedPaste {
  text: string;
  format: string;
}

const STORAGE_PREFIX = 'vramplan.paste.';

/** The paste saved for `view`, or an empty one (nothing saved, storage refused or garbled). */
export function loadPaste(storage: Pick<Storage, 'getItem'> | null, view: string): SavedPaste {
  try {
    const saved = JSON.parse(storage?.getItem(STORAGE_PREFIX + view) ?? 'null');
    if (saved && typeof saved.text === 'string')
      return { text: saved.text, format: typeof saved.format === 'string' ? saved.format : '' };
  } catch {
    // an unreadable entry is as good as none
  }
  return { text: '', format: '' };
}

/** Keeps the paste for the session; an empty text forgets it. Storage errors (quota) are ignored. */
export function savePaste(
  storage: Pick<Storage, 'setItem' | 'removeItem'> | null,
  view: string,
  paste: SavedPaste,
): void {
  try {
    if (paste.text.trim() === '') storage?.removeItem(STORAGE_PREFIX + view);
    else storage?.setItem(STORAGE_PREFIX + view, JSON.stringify(paste));
  } catch {
    // private mode or a full quota: the paste lives only in the text box
  }
}
