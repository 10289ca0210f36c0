// The quick calculator's answer on screen: the coarse rows with their formulas and sources, the
// total beside what the calculator these examples come from reports, and vramplan's full
// estimate of the matching architecture with its own rows, so the gap is visible.

import { el, replace } from '../../dom';
import { gibFixed, groupDigits } from '../../format';
import { bytesCell, cardSection, warningList } from '../result_widgets';
import type { QuickAnswer } from './quick_data';

export function renderQuick(target: HTMLElement, a: QuickAnswer): void {
  const rows = el(
    'tbody',
    {},
    a.rows.map((r) =>
      el(
        'tr',
        {},
        el('td', {}, r.component),
        bytesCell('td', r.bytes, { class: 'num' }),
        el('td', { class: 'formula' }, r.formula),
        el('td', { class: 'source' }, r.source),
      ),
    ),
  );
  const foot = el(
    'tfoot',
    {},
    el(
      'tr',
      {},
      el('td', {}, 'Total'),
      bytesCell('td', a.total_bytes, { class: 'num', id: 'quick-total' }),
      el('td', { colspan: '2' }, 'the coarse formula’s sum'),
    ),
  );
  const table = el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      { id: 'quick-rows', class: 'breakdown-table' },
      el('caption', {}, 'Coarse rows (GiB)'),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', { scope: 'col' }, 'Component'),
          el('th', { scope: 'col' }, 'GiB'),
          el('th', { scope: 'col' }, 'Formula'),
          el('th', { scope: 'col' }, 'Source'),
        ),
      ),
      rows,
      foot,
    ),
  );
  const full = a.full_estimate;
  const comparison = el(
    'dl',
    { class: 'quick-compare' },
    el('dt', {}, 'Coarse total'),
    el('dd', {}, bytesCell('strong', a.total_bytes, { id: 'quick-coarse' })),
    a.calculator_gib !== null
      ? [
          el('dt', {}, 'The calculator’s figure'),
          el(
            'dd',
            { id: 'quick-calculator', 'data-gib': String(a.calculator_gib) },
            `${a.calculator_gib.toFixed(2)} GiB`,
          ),
        ]
      : null,
    full
      ? [
          el('dt', {}, `Full estimate (vramplan ${full.command})`),
          el(
            'dd',
            {},
            bytesCell('strong', full.total_bytes, { id: 'quick-full' }),
            ` — ${full.model}, ${groupDigits(full.parameters)} parameters, peak per GPU as nvidia-smi shows it`,
          ),
        ]
      : null,
  );
  const fullRows = full
    ? el(
        'details',
        { class: 'group' },
        el('summary', {}, 'The full estimate’s rows'),
        el(
          'div',
          { class: 'table-wrap' },
          el(
            'table',
            { id: 'quick-full-rows' },
            el(
              'thead',
              {},
              el(
                'tr',
                {},
                el('th', { scope: 'col' }, 'Component'),
                el('th', { scope: 'col' }, 'GiB'),
                el('th', { scope: 'col' }, 'Counts toward'),
              ),
            ),
            el(
              'tbody',
              {},
              full.rows.map((r) =>
                el(
                  'tr',
                  {},
                  el('td', {}, r.component),
                  bytesCell('td', r.bytes, { class: 'num' }),
                  el('td', {}, r.counts_toward),
                ),
              ),
            ),
          ),
        ),
      )
    : null;
  replace(
    target,
    cardSection('quick-compare-title', 'Coarse and full', comparison, fullRows),
    cardSection(
      'quick-rows-title',
      'Where the coarse bytes go',
      el(
        'p',
        { id: 'quick-multiplier', 'data-value': String(a.activation_multiplier.value) },
        `Activation multiplier m = ${a.activation_multiplier.value.toPrecision(4)} (${a.activation_multiplier.source}).`,
      ),
      table,
    ),
    cardSection('quick-notes-title', 'Notes', warningList(a.notes)),
  );
}

/** "44.50 GiB" as the CLI's table prints a byte count. */
export function gibText(bytes: number): string {
  return `${gibFixed(bytes, 2)} GiB`;
}
