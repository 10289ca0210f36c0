// Exports of an estimate: the CSV the CLI writes (`--format csv`) and a JSON bundle.

import type { Estimate, InferenceEstimate, Scenario } from './types';
import { gibFixed } from './format';

/** RFC 4180: a field holding a comma, quote or line break is quoted, its quotes doubled. */
export function csvField(text: string): string {
  if (!/[",\r\n]/.test(text)) return text;
  return `"${text.replace(/"/g, '""')}"`;
}

/** One line per row of every stage, the same columns as `vramplan estimate --format csv`. */
export function estimateToCsv(estimate: Estimate): string {
  const lines = ['stage,component,bytes,gib,counts_toward,formula,source'];
  for (const stage of estimate.stages) {
    for (const row of stage.rows) {
      lines.push(
        [
          csvField(stage.name),
          csvField(row.component),
          String(row.bytes),
          gibFixed(row.bytes, 4),
          row.counts_toward,
          csvField(row.formula),
          csvField(row.source),
        ].join(','),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The rows of the binding GPU, the same columns as `vramplan infer --format csv`. */
export function inferenceToCsv(estimate: InferenceEstimate): string {
  const lines = ['component,bytes,gib,counts_toward,formula,source'];
  for (const row of estimate.rows) {
    lines.push(
      [
        csvField(row.component),
        String(row.bytes),
        gibFixed(row.bytes, 4),
        row.counts_toward,
        csvField(row.formula),
        csvField(row.source),
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The inputs as sent (a scenario file `vramplan estimate --scenario` reads) and the answer, as the
 * API gave it (an Estimate or an InferenceEstimate).
 */
export function estimateToJson(input: Scenario, estimate: unknown): string {
  return `${JSON.stringify({ input, estimate }, null, 2)}\n`;
}

const NAME_KEYS = ['tp', 'pp', 'dp', 'cp', 'ep', 'seq_len', 'micro_batch'];

/**
 * A file name from the scenario: vramplan-Llama-3.1-8B-tp2-seqlen8192.csv; `prefix` names the
 * view's files apart (vramplan-infer-...), `keys` the settings worth naming.
 */
export function exportName(
  input: Scenario,
  extension: string,
  prefix = 'vramplan',
  keys: string[] = NAME_KEYS,
): string {
  const model =
    typeof input.model === 'string' ? input.model : input.model_config ? 'config' : 'custom';
  const parts = [prefix, model];
  for (const key of keys) {
    if (input[key] !== undefined) parts.push(`${key.replace('_', '')}${String(input[key])}`);
  }
  return `${parts.join('-').replace(/[^A-Za-z0-9._-]+/g, '_')}.${extension}`;
}
