// The roofline view's results: the step time and what it gives (tokens/s per GPU, MFU), its
// exposed parts, the roofline chart and the table of every operation (FLOPs, bytes, arithmetic
// intensity, memory- or compute-bound). Exact numbers ride in data-* attributes for tools and
// tests; the text is rounded for people.

import { el, replace } from '../../dom';
import { percent } from '../../format';
import type { ApiError } from '../../types';
import { cardSection, warningList } from '../result_widgets';
import { rooflineChart } from './chart';
import {
  bytesText,
  flopsText,
  opRows,
  secondsText,
  siNumber,
  stepParts,
  type RooflineAnswer,
} from './roofline_data';

/**
 * A bar as long as `share` (0..1) of 6rem. Its width is set through the CSSOM: the server's
 * Content-Security-Policy (style-src 'self') refuses style attributes.
 */
function shareBar(share: number): HTMLElement {
  const bar = el('span', { class: 'share-bar', 'aria-hidden': 'true' });
  bar.style.width = `${(Math.min(1, Math.max(0, share)) * 6).toFixed(2)}rem`;
  return bar;
}

export class RooflineResults {
  readonly element: HTMLElement;
  private readonly status = el('p', { class: 'status', id: 'results-status', role: 'status' });
  private readonly cards = el('div', { class: 'peak-cards', id: 'roofline-cards' });
  private readonly body = el('div', { class: 'results-body' });
  private answer: RooflineAnswer | null = null;

  constructor() {
    this.element = el(
      'section',
      { class: 'results', id: 'results', 'aria-labelledby': 'results-title' },
      el('h2', { id: 'results-title', class: 'sr-only' }, 'Results'),
      this.status,
      this.cards,
      this.body,
    );
  }

  current(): RooflineAnswer | null {
    return this.answer;
  }

  setPending(): void {
    this.element.classList.add('pending');
    this.element.setAttribute('aria-busy', 'true');
    this.status.textContent = 'Updating…';
  }

  showInvalid(error: ApiError | null, note: string): void {
    this.answer = null;
    this.element.classList.remove('pending');
    this.element.classList.add('invalid');
    this.element.removeAttribute('aria-busy');
    this.status.textContent = note;
    replace(
      this.cards,
      el('div', { class: 'invalid-note', id: 'results-error' }, error ? error.message : note),
    );
    this.body.hidden = true;
  }

  show(answer: RooflineAnswer): void {
    this.answer = answer;
    this.element.classList.remove('pending', 'invalid');
    this.element.removeAttribute('aria-busy');
    this.status.textContent = 'Up to date';
    this.body.hidden = false;
    this.renderCards(answer);
    replace(
      this.body,
      this.stepCard(answer),
      cardSection(
        'roofline-chart-heading',
        'Roofline',
        el(
          'p',
          { class: 'hint' },
          `One microbatch of ${siNumber(answer.tokens_per_microbatch)} tokens on one GPU after `,
          'sharding; each operation at its FLOPs over its ideal time, max(FLOPs ÷ peak, bytes ÷ ',
          'bandwidth). Hover a point for its name.',
        ),
        rooflineChart(answer),
      ),
      this.opsCard(answer),
      cardSection('roofline-warnings-heading', 'Notes', warningList(answer.warnings ?? [])),
    );
  }

  private renderCards(a: RooflineAnswer): void {
    const card = (title: string, id: string, value: number, text: string, note: string) =>
      el(
        'div',
        { class: 'peak-card' },
        el('span', { class: 'peak-title' }, title),
        el('strong', { class: 'peak-value', id, 'data-value': String(value) }, text),
        el('small', {}, note),
      );
    const s = a.step_time;
    replace(
      this.cards,
      card(
        'Step time',
        'roofline-step-time',
        s.step_time_s,
        secondsText(s.step_time_s),
        'one optimizer step, slowest rank',
      ),
      card(
        'Tokens/s per GPU',
        'roofline-tokens',
        s.tokens_per_s_per_gpu,
        siNumber(s.tokens_per_s_per_gpu),
        'global batch × sequence ÷ (step time × GPUs)',
      ),
      card('MFU', 'roofline-mfu', s.mfu, percent(s.mfu), 'model FLOPs ÷ (step time × peak × GPUs)'),
      card(
        a.gpu.id,
        'roofline-gpu',
        a.gpu.matmul_tflops,
        `${a.gpu.matmul_tflops} TFLOP/s`,
        `${a.gpu.compute_dtype} matmul peak; HBM ${a.gpu.hbm_gbps} GB/s; ${a.cluster.gpus_per_node} GPUs per node`,
      ),
    );
  }

  private stepCard(a: RooflineAnswer): HTMLElement {
    const parts = stepParts(a.step_time);
    return cardSection(
      'roofline-step-heading',
      'Step time breakdown',
      el(
        'div',
        { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Step time table' },
        el(
          'table',
          { class: 'step-table', id: 'step-table' },
          el('caption', {}, 'Exposed (not overlapped) time of one step; the parts add up.'),
          el(
            'thead',
            {},
            el('tr', {}, ...['Part', 'Time', 'Share'].map((h) => el('th', { scope: 'col' }, h))),
          ),
          el(
            'tbody',
            {},
            parts.map((p) =>
              el(
                'tr',
                { 'data-part': p.key },
                el('th', { scope: 'row' }, p.label),
                el(
                  'td',
                  { class: 'num', 'data-seconds': String(p.seconds) },
                  secondsText(p.seconds),
                ),
                el('td', { class: 'num share' }, shareBar(p.share), percent(p.share)),
              ),
            ),
          ),
          el(
            'tfoot',
            {},
            el(
              'tr',
              { class: 'total', 'data-part': 'step_time_s' },
              el('th', { scope: 'row' }, 'Step'),
              el(
                'td',
                { class: 'num', 'data-seconds': String(a.step_time.step_time_s) },
                secondsText(a.step_time.step_time_s),
              ),
              el('td', { class: 'num' }, percent(1)),
            ),
          ),
        ),
      ),
    );
  }

  private opsCard(a: RooflineAnswer): HTMLElement {
    const rows = opRows(a);
    const headers = [
      'Operation',
      'Pass',
      'Kind',
      'FLOPs',
      'Bytes',
      'Intensity (FLOP/B)',
      'Ridge (FLOP/B)',
      'Bound',
      'Ideal time',
      'Formula (forward FLOPs)',
    ];
    return cardSection(
      'roofline-ops-heading',
      'Operations per layer',
      el(
        'div',
        {
          class: 'table-wrap',
          id: 'roofline-ops',
          tabindex: '0',
          role: 'region',
          'aria-label': 'Operation table',
        },
        el(
          'table',
          { class: 'ops-table' },
          el(
            'caption',
            {},
            'Per GPU and microbatch after TP/SP/CP/EP sharding, under each kind of layer (× how many the model has; each row counts one of them).',
          ),
          el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', { scope: 'col' }, h)))),
          a.sections.map((section, index) =>
            el(
              'tbody',
              { 'data-section': String(index) },
              el(
                'tr',
                { class: 'section-row' },
                el(
                  'th',
                  { scope: 'colgroup', colspan: String(headers.length) },
                  section.layers > 1 ? `${section.name} (×${section.layers})` : section.name,
                ),
              ),
              rows
                .filter((r) => r.id.startsWith(`${index}.`))
                .map((r) =>
                  el(
                    'tr',
                    {
                      'data-op': r.id,
                      'data-flops': String(r.flops),
                      'data-bytes': String(r.bytes),
                      'data-intensity': String(r.intensity),
                      'data-bound': r.bound,
                      class: `bound-${r.bound}`,
                    },
                    el('th', { scope: 'row' }, r.op),
                    el('td', {}, r.pass),
                    el('td', {}, r.kind),
                    el('td', { class: 'num', title: `${r.flops} FLOP` }, flopsText(r.flops)),
                    el('td', { class: 'num', title: `${r.bytes} bytes` }, bytesText(r.bytes)),
                    el('td', { class: 'num' }, r.intensity.toFixed(1)),
                    el('td', { class: 'num' }, r.ridge.toFixed(1)),
                    el('td', { class: 'bound' }, r.bound),
                    el('td', { class: 'num' }, secondsText(r.roofline_s)),
                    el('td', { class: 'formula' }, r.formula),
                  ),
                ),
            ),
          ),
        ),
      ),
    );
  }
}
