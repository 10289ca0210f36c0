// The scenario the user is editing, and its round trip through the page URL. Only the inputs the
// user set are kept, so every other value stays the core's default (shown as a placeholder).

import type { OptionKind, OptionSpec, Scenario } from './types';

/** URL parameters that belong to the page, not to the scenario. */
export const PAGE_PARAMS = new Set(['view']);

/**
 * Turns what the user typed into the value sent to the API. Clean numbers and booleans become
 * JSON numbers and booleans; anything else is sent as typed so that the core, the one validator,
 * answers with its own message (e.g. seq_len = "abc": accepted an integer).
 */
export function coerce(kind: OptionKind, raw: string): unknown {
  const text = raw.trim();
  switch (kind) {
    case 'integer':
      if (/^-?\d+$/.test(text)) {
        const n = Number(text);
        return Number.isSafeInteger(n) ? n : text;
      }
      return text;
    case 'number': {
      if (text !== '' && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text);
      return text;
    }
    case 'bool':
      if (text === 'true') return true;
      if (text === 'false') return false;
      return text;
    case 'object':
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    default:
      return raw;
  }
}

/** The text form of a scenario value, as an input or the URL holds it. */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Writes the scenario (and the view) into a query string: ?view=training&model=...&tp=2 */
export function scenarioToQuery(scenario: Scenario, view: string): string {
  const params = new URLSearchParams();
  params.set('view', view);
  for (const [key, value] of Object.entries(scenario)) {
    if (value === undefined || value === '') continue;
    params.set(key, toText(value));
  }
  return `?${params.toString()}`;
}

/** Reads a scenario back from a query string, typing each value by its option's kind. */
export function scenarioFromQuery(
  query: string,
  options: OptionSpec[],
): { scenario: Scenario; view: string | null } {
  const params = new URLSearchParams(query);
  const kinds = new Map(options.map((o) => [o.key, o.kind]));
  const scenario: Scenario = {};
  for (const [key, raw] of params) {
    if (PAGE_PARAMS.has(key)) continue;
    // Keys the options do not know are passed on as text: the API names them in its error.
    scenario[key] = coerce(kinds.get(key) ?? 'text', raw);
  }
  return { scenario, view: params.get('view') };
}
