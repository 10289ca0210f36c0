// The plan view's answer on screen: the fastest layouts that fit as a table (each with a link that
// opens it in the estimate view), why the first one wins, every fitting layout as a scatter of
// peak memory against speed (space_chart.ts), the card that writes the winner as a config, and
// the top layouts' speeds as a bar chart; or, when none fits, the closest miss and what to change.

import { Chart } from '../../charts';
import { el, replace } from '../../dom';
import { exactBytes } from '../../format';
import { scenarioToQuery } from '../../scenario';
import {
  mfuText,
  peakText,
  stepText,
  tokensText,
  type PlanAnswer,
  type PlanCandidate,
} from './plan_data';
import { spaceCard } from './space_chart';

export class PlanResults {
  readonly element = el('section', {
    id: 'plan-results',
    class: 'results',
    'aria-label': 'Plan results',
  });
  private chart: Chart | null = null;

  /** `winnerExport`: the "Copy as" card, shown beside the winner while a layout fits. */
  constructor(private readonly winnerExport: HTMLElement) {}

  /** While a search runs the shown answer is outdated: dimmed and marked busy. */
  setSearching(on: boolean): void {
    if (on) {
      this.element.setAttribute('aria-busy', 'true');
      this.element.classList.add('pending');
    } else {
      this.element.removeAttribute('aria-busy');
      this.element.classList.remove('pending');
    }
  }

  /** No answer to show (the inputs are invalid). */
  clear(): void {
    replace(this.element);
  }

  /** The answer: the table of the fastest layouts, why the first, and their speeds; or no fit. */
  show(answer: PlanAnswer): void {
    const heading = el(
      'p',
      { class: 'hint' },
      `${answer.model} on ${answer.gpus} × ${answer.gpu.name} (${answer.gpu.gpus_per_node} per node); `,
      `limit ${peakText(answer.limit_bytes, answer.gpu.usable_bytes).replace(' / ', ' GiB of ')} `,
      `usable (headroom ${(answer.headroom * 100).toFixed(0)}%).`,
    );
    this.chart?.destroy();
    this.chart = null;
    if (answer.candidates.length === 0) {
      replace(this.element, el('div', { class: 'card' }, heading, this.noFit(answer)));
      return;
    }
    const canvas = el('canvas', {
      id: 'plan-chart',
      role: 'img',
      'aria-label': `Tokens per second per GPU of the top ${answer.candidates.length} layouts`,
    });
    replace(
      this.element,
      el(
        'div',
        { class: 'card' },
        el('h2', {}, 'Fastest layouts that fit'),
        heading,
        this.table(answer),
      ),
      el(
        'div',
        { class: 'card' },
        el('h2', {}, 'Why this layout'),
        el('p', { id: 'plan-why' }, answer.why),
      ),
      answer.space && answer.space.points.length > 0
        ? spaceCard({
            space: answer.space,
            usableBytes: answer.gpu.usable_bytes,
            limitBytes: answer.limit_bytes,
            gpuName: answer.gpu.name,
          })
        : null,
      this.winnerExport,
      el(
        'div',
        { class: 'card' },
        el('h2', {}, 'Tokens/s per GPU'),
        el('div', { class: 'chart-box' }, canvas),
      ),
    );
    this.chart = this.drawChart(canvas, answer.candidates);
  }

  private table(answer: PlanAnswer): HTMLElement {
    const head = ['#', 'Layout', 'Peak device / limit', 'Step time', 'Tokens/s/GPU', 'MFU', ''];
    return el(
      'div',
      { class: 'table-wrap' },
      el(
        'table',
        { id: 'plan-table' },
        el('caption', {}, `Top ${answer.candidates.length}, fastest first`),
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            head.map((h) => el('th', { scope: 'col' }, h)),
          ),
        ),
        el(
          'tbody',
          {},
          answer.candidates.map((c, i) =>
            el(
              'tr',
              { 'data-rank': i + 1 },
              el('td', { class: 'num' }, i + 1),
              el(
                'td',
                { class: 'layout' },
                el('code', {}, c.layout),
                // The same trade-off under other names (same step time and peak).
                (c.equivalents ?? []).map((e) =>
                  el('div', { class: 'equivalent' }, '= ', el('code', {}, e)),
                ),
              ),
              el(
                'td',
                {
                  class: 'num peak',
                  'data-bytes': c.peak.device_bytes,
                  title: exactBytes(c.peak.device_bytes),
                },
                peakText(c.peak.device_bytes, answer.limit_bytes),
              ),
              el('td', { class: 'num' }, stepText(c.step_time_s)),
              el(
                'td',
                { class: 'num tokens', 'data-value': c.tokens_per_s_per_gpu },
                tokensText(c.tokens_per_s_per_gpu),
              ),
              el('td', { class: 'num' }, mfuText(c.mfu)),
              el('td', {}, this.estimateLink(c, i + 1)),
            ),
          ),
        ),
      ),
    );
  }

  private estimateLink(candidate: PlanCandidate, rank: number): HTMLElement {
    return el(
      'a',
      {
        href: `${window.location.pathname}${scenarioToQuery(candidate.scenario, 'training')}`,
        class: 'open-estimate',
        'aria-label': `open in estimate view: layout ${rank}, ${candidate.layout}`,
      },
      'open in estimate view',
    );
  }

  private noFit(answer: PlanAnswer): HTMLElement {
    const miss = answer.closest_miss;
    return el(
      'div',
      { class: 'invalid-note', id: 'plan-no-fit', role: 'status' },
      el('p', {}, 'No layout fits.'),
      answer.offload_search?.ran
        ? el('p', { id: 'plan-offload-note' }, answer.offload_search.note)
        : null,
      miss
        ? el(
            'p',
            {},
            `The closest, `,
            el('code', {}, miss.layout),
            `, needs ${peakText(miss.peak.device_bytes, answer.limit_bytes)} per GPU. `,
            this.estimateLink(miss, 1),
          )
        : null,
      answer.suggestions.length
        ? el(
            'ul',
            {},
            answer.suggestions.map((tip) => el('li', {}, tip)),
          )
        : null,
    );
  }

  private drawChart(canvas: HTMLCanvasElement, candidates: PlanCandidate[]): Chart {
    return new Chart(canvas, {
      type: 'bar',
      data: {
        labels: candidates.map((_, i) => `#${i + 1}`),
        datasets: [
          {
            label: 'tokens/s per GPU',
            data: candidates.map((c) => c.tokens_per_s_per_gpu),
            backgroundColor: candidates.map((_, i) => (i === 0 ? '#1f77b4' : '#9ecae1')),
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              title: (items) => candidates[items[0].dataIndex].layout,
              label: (item) => `${tokensText(Number(item.raw))} tokens/s per GPU`,
            },
          },
        },
        scales: {
          y: { beginAtZero: true, title: { display: true, text: 'tokens/s per GPU' } },
        },
      },
    });
  }
}
