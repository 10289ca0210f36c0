// Pieces every results panel shows the same way: sizes (GiB on screen, exact bytes on hover and
// in data-bytes for tools and tests), verdicts, a GPU's fit card, the warnings, titled cards and
// the breakdown table with its totals.

import { el, type Child } from '../dom';
import { exactBytes, gib, percent } from '../format';
import type { Fit, Row } from '../types';

/** A number of bytes as GiB text, the exact count on hover and in data-bytes for tools. */
export function bytesCell(
  tag: 'span' | 'td' | 'strong',
  bytes: number,
  attrs: Record<string, string> = {},
) {
  return el(tag, { ...attrs, title: exactBytes(bytes), 'data-bytes': String(bytes) }, gib(bytes));
}

export function verdictText(verdict: string): string {
  return verdict === 'fits'
    ? 'Fits'
    : verdict === 'tight'
      ? 'Tight'
      : verdict === 'oom'
        ? 'Out of memory'
        : verdict;
}

export function fitCard(f: Fit, chosen: boolean): HTMLElement {
  const fraction = Math.max(0, f.used_fraction);
  return el(
    'div',
    { class: `fit-card verdict-${f.verdict}${chosen ? ' chosen' : ''}`, 'data-gpu': f.gpu },
    el('span', { class: 'fit-name' }, f.name ?? f.gpu, chosen ? ' (chosen)' : ''),
    el('span', { class: 'fit-verdict' }, verdictText(f.verdict)),
    el('meter', {
      min: '0',
      max: '1',
      low: '0.8',
      high: '0.99',
      optimum: '0.5',
      value: String(Math.min(fraction, 1)),
      'aria-label': `${f.gpu} used`,
    }),
    el('small', {}, `${percent(fraction)} of `, bytesCell('span', f.usable_bytes)),
    f.host
      ? el(
          'small',
          { class: `fit-host verdict-${f.host.verdict}` },
          `host: ${verdictText(f.host.verdict)}, ${percent(f.host.used_fraction)} of `,
          bytesCell('span', f.host.memory_bytes),
          ` node RAM`,
        )
      : null,
  );
}

/** The warnings list, or "None." */
export function warningList(warnings: string[]): HTMLElement {
  return warnings.length
    ? el(
        'ul',
        {},
        warnings.map((text) => el('li', {}, text)),
      )
    : el('p', { class: 'hint' }, 'None.');
}

/** The three quantities a breakdown table totals (and, with offload, host and disk). */
export interface Totals {
  allocated_bytes: number;
  reserved_bytes: number;
  device_bytes: number;
  host_bytes?: number;
  disk_bytes?: number;
}

/** A card with a heading that names it (aria-labelledby `titleId`). */
export function cardSection(titleId: string, title: string, ...children: Child[]): HTMLElement {
  return el(
    'section',
    { class: 'card', 'aria-labelledby': titleId },
    el('h3', { id: titleId }, title),
    ...children,
  );
}

/** A card holding a chart's canvas. */
export function chartSection(titleId: string, title: string, canvas: HTMLCanvasElement) {
  return el(
    'section',
    { class: 'card chart-card', 'aria-labelledby': titleId },
    el('h3', { id: titleId }, title),
    el('div', { class: 'chart-box' }, canvas),
  );
}

/** The verdict on the chosen GPU as a headline card, or null without a GPU. */
export function verdictCard(chosen: Fit | undefined): HTMLElement | null {
  if (!chosen) return null;
  return el(
    'div',
    { class: `peak-card verdict verdict-${chosen.verdict}` },
    el('span', { class: 'peak-title' }, chosen.name ?? chosen.gpu),
    el('strong', { class: 'peak-value', id: 'peak-verdict' }, verdictText(chosen.verdict)),
    el('small', {}, `${percent(chosen.used_fraction)} of ${gib(chosen.usable_bytes)} usable`),
  );
}

/** The rows of one GPU, each with its formula and source, and the three totals below them. */
export function breakdownTable(
  captionId: string,
  caption: Child[],
  rows: Row[],
  totals: Totals,
): HTMLElement {
  const total = (label: string, bytes: number) =>
    el(
      'tr',
      { class: 'total' },
      el('th', { scope: 'row' }, label),
      bytesCell('td', bytes, { class: 'num' }),
      el('td', { colspan: '3' }),
    );
  return el(
    'table',
    { class: 'breakdown-table' },
    el('caption', { id: captionId }, ...caption),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['Component', 'Size', 'Counts toward', 'Formula', 'Source'].map((h) =>
          el('th', { scope: 'col' }, h),
        ),
      ),
    ),
    el(
      'tbody',
      {},
      rows.map((row) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row' }, row.component),
          bytesCell('td', row.bytes, { class: 'num' }),
          el('td', {}, row.counts_toward),
          el('td', { class: 'formula' }, row.formula),
          el('td', { class: 'source' }, row.source),
        ),
      ),
    ),
    el(
      'tfoot',
      {},
      total('Allocated', totals.allocated_bytes),
      total('Reserved', totals.reserved_bytes),
      total('Device', totals.device_bytes),
      totals.host_bytes ? total('Host (one rank)', totals.host_bytes) : null,
      totals.disk_bytes ? total('Disk (one rank)', totals.disk_bytes) : null,
    ),
  );
}
