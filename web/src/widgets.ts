// Pieces every results panel shows the same way: sizes (GiB on screen, exact bytes on hover and
// in data-bytes for tools and tests), verdicts, and a GPU's fit card.

import { el } from './dom';
import { exactBytes, gib, percent } from './format';
import type { Fit } from './types';

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
