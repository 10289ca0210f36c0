// The frame of the training and inference results panels: the status line, headline cards,
// body and one-line summary on phones, their pending / invalid / shown states, the standard card
// sections (breakdown, parameters and warnings, fit) and the stacked bar chart against the chosen
// GPU. Each panel adds what only it shows.

import { Chart, capacityLine } from '../charts';
import { el, replace, type Child } from '../dom';
import { GIB } from '../format';
import type { ApiError } from '../types';
import { cardSection, fitCard, verdictText, warningList } from './result_widgets';
import type { Answer, AnswerPanel } from './scenario_page';

/** What a results panel reads of every answer, besides what only it shows. */
export interface PanelAnswer extends Answer {
  warnings: string[];
}

/** One component's bar segments (GiB per bar) in a stacked bar chart. */
export interface BarSegment {
  label: string;
  color: string;
  data: number[];
}

export interface StackedBars {
  labels: string[];
  segments: BarSegment[];
  maxBarThickness: number;
  /** The tallest bar in GiB: the axis reaches past it or the GPU's line, whichever is higher. */
  tallestGiB: number;
  legend: 'bottom' | 'right';
  tooltip: (label: string | undefined, gibValue: number) => string;
  /** The text on the chosen GPU's line. */
  capacityLabel: string;
}

export abstract class ResultsPanelBase<A extends PanelAnswer> implements AnswerPanel<A> {
  readonly element: HTMLElement;
  /** The answer in one line, fixed at the bottom of phone screens (hidden on wide ones). */
  readonly mini = el('div', { class: 'mini-peak no-print', id: 'mini-peak' });
  private readonly status = el('p', { class: 'status', id: 'results-status', role: 'status' });
  /** The headline cards, or what to fix while the inputs are invalid. */
  protected readonly cards: HTMLElement;
  /** Everything below the cards: hidden while the inputs are invalid. */
  protected readonly body = el('div', { class: 'results-body' });
  // Focusable so that keyboard users can scroll a wide table on a narrow screen.
  protected readonly table = el('div', {
    class: 'table-wrap',
    id: 'breakdown',
    tabindex: '0',
    role: 'region',
    'aria-label': 'Breakdown table',
  });
  protected readonly params = el('div', { class: 'params', id: 'parameters' });
  private readonly warnings = el('div', { class: 'warnings', id: 'warnings' });
  private readonly fit = el('div', { class: 'fit-cards', id: 'fit' });
  private chart: Chart | null = null;
  protected estimate: A | null = null;

  /** `cardsId`: the id of the headline cards' container. The subclass fills `body`. */
  constructor(cardsId: string) {
    this.cards = el('div', { class: 'peak-cards', id: cardsId, 'aria-live': 'polite' });
    this.element = el(
      'section',
      { class: 'results', id: 'results', 'aria-labelledby': 'results-title' },
      el('h2', { id: 'results-title', class: 'sr-only' }, 'Results'),
      this.status,
      this.cards,
      this.body,
    );
  }

  /** Inputs changed: until the new answer arrives, what is shown is marked as out of date. */
  setPending(): void {
    this.element.classList.add('pending');
    this.element.setAttribute('aria-busy', 'true');
    this.status.textContent = 'Updating…';
    this.mini.classList.add('pending');
  }

  /** The inputs are invalid: no numbers are shown, only what to fix. */
  showInvalid(error: ApiError | null, note: string): void {
    this.estimate = null;
    this.element.classList.remove('pending');
    this.element.classList.add('invalid');
    this.element.removeAttribute('aria-busy');
    this.status.textContent = note;
    replace(
      this.cards,
      el('div', { class: 'invalid-note', id: 'results-error' }, error ? error.message : note),
    );
    this.body.hidden = true;
    this.mini.classList.remove('pending');
    replace(
      this.mini,
      el('span', {}, 'Invalid input: see the highlighted field'),
      el('a', { href: '#results' }, 'Details'),
    );
  }

  show(answer: A): void {
    this.estimate = answer;
    this.element.classList.remove('pending', 'invalid');
    this.element.removeAttribute('aria-busy');
    this.body.hidden = false;
    this.status.textContent = 'Up to date';
    this.render();
    replace(this.warnings, warningList(answer.warnings));
    replace(
      this.fit,
      answer.fit.map((f, i) => fitCard(f, i === 0)),
    );
  }

  current(): A | null {
    return this.estimate;
  }

  /** Draws what only this panel shows of `this.estimate`. */
  protected abstract render(): void;

  /** The one-line summary: `parts`, then the chosen GPU's verdict. */
  protected showMini(...parts: (Child | Child[])[]): void {
    const chosen = this.estimate!.fit[0];
    this.mini.classList.remove('pending');
    replace(
      this.mini,
      el('span', {}, ...parts, chosen ? ` · ${verdictText(chosen.verdict)} on ${chosen.gpu}` : ''),
      el('a', { href: '#results' }, 'Results'),
    );
  }

  /** The Breakdown card: `above` the table (e.g. a stage picker), then the table. */
  protected breakdownSection(...above: HTMLElement[]): HTMLElement {
    return cardSection('table-title', 'Breakdown', ...above, this.table);
  }

  /** Parameters and warnings side by side. */
  protected paramsAndWarnings(warningsTitle: string): HTMLElement {
    return el(
      'div',
      { class: 'two-col' },
      cardSection('params-title', 'Parameters', this.params),
      cardSection('warnings-title', warningsTitle, this.warnings),
    );
  }

  /** "Does it fit?": one card per GPU, after a `hint` on what is compared. */
  protected fitSection(hint: string): HTMLElement {
    return cardSection('fit-title', 'Does it fit?', el('p', { class: 'hint' }, hint), this.fit);
  }

  /** A new stacked bar chart per answer (cheap without animation; no stale options survive). */
  protected drawStackedBars(canvas: HTMLCanvasElement, bars: StackedBars): void {
    const capacity = this.estimate!.fit[0];
    const capacityGiB = capacity ? capacity.usable_bytes / GIB : null;
    const datasets = bars.segments.map((segment) => ({
      label: segment.label,
      backgroundColor: segment.color,
      data: segment.data,
      stack: 'memory',
      maxBarThickness: bars.maxBarThickness,
    }));
    this.chart?.destroy();
    this.chart = new Chart(canvas, {
      type: 'bar',
      data: { labels: bars.labels, datasets },
      plugins: [capacityLine],
      options: {
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: { stacked: true },
          y: {
            stacked: true,
            beginAtZero: true,
            suggestedMax: Math.max(bars.tallestGiB, capacityGiB ?? 0) * 1.08,
            title: { display: true, text: 'GiB per GPU' },
          },
        },
        plugins: {
          legend: { position: bars.legend },
          tooltip: {
            callbacks: {
              label: (item: { dataset: { label?: string }; raw: unknown }) =>
                bars.tooltip(item.dataset.label, item.raw as number),
            },
          },
          capacityLine: { value: capacityGiB, label: capacity ? bars.capacityLabel : '' },
        },
      },
    });
  }
}
