// The sweep: peak memory of the current scenario against one input (sequence length,
// micro-batch or TP), with the chosen GPU's usable memory as a line.

import { TransportError, api } from '../../api';
import { Chart, capacityLine } from '../../charts';
import { el, replace } from '../../dom';
import { GIB, exactBytes, gib } from '../../format';
import { LatestOnly, debounce } from '../../live';
import type { Fit, Scenario } from '../../types';
import {
  SWEEP_DEFAULTS,
  SWEEP_LABELS,
  normaliseSweep,
  parseSweepValues,
  type SweepPoint,
} from './sweep_data';

export class SweepPanel {
  readonly element: HTMLElement;
  private readonly varySelect: HTMLSelectElement;
  private readonly valuesInput: HTMLInputElement;
  private readonly valuesError: HTMLElement;
  private readonly status: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly table: HTMLElement;
  private readonly requests = new LatestOnly<SweepPoint[]>();
  private readonly scheduleRun = debounce(() => void this.run(), 300);
  private chart: Chart | null = null;
  private scenario: Scenario | null = null;
  private capacity: Fit | null = null;
  private points: SweepPoint[] = [];

  constructor() {
    this.varySelect = el(
      'select',
      {
        id: 'sweep-vary',
        onchange: () => {
          this.valuesInput.value = SWEEP_DEFAULTS[this.varySelect.value].join(', ');
          this.markPending();
          this.scheduleRun();
        },
      },
      Object.keys(SWEEP_DEFAULTS).map((key) => el('option', { value: key }, SWEEP_LABELS[key])),
    );
    this.valuesInput = el('input', {
      id: 'sweep-values',
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'off',
      value: SWEEP_DEFAULTS.seq_len.join(', '),
      'aria-describedby': 'sweep-values-error sweep-values-help',
      oninput: () => {
        this.markPending();
        this.scheduleRun();
      },
    });
    this.valuesError = el('p', { id: 'sweep-values-error', class: 'field-error', hidden: true });
    this.status = el('p', { class: 'status', id: 'sweep-status', role: 'status' });
    this.canvas = el('canvas', {
      id: 'sweep-chart',
      role: 'img',
      'aria-label': 'Line chart of peak memory in the sweep (not computed yet)',
      'aria-describedby': 'sweep-table-caption',
    });
    this.table = el('div', {
      class: 'table-wrap',
      id: 'sweep-table',
      tabindex: '0',
      role: 'region',
      'aria-label': 'Sweep table',
    });
    this.element = el(
      'section',
      { class: 'card sweep', id: 'sweep', 'aria-labelledby': 'sweep-title' },
      el('h3', { id: 'sweep-title' }, 'Sweep'),
      el(
        'div',
        { class: 'sweep-controls' },
        el('div', { class: 'field' }, el('label', { for: 'sweep-vary' }, 'Vary'), this.varySelect),
        el(
          'div',
          { class: 'field wide' },
          el('label', { for: 'sweep-values' }, 'Values'),
          this.valuesInput,
          el(
            'small',
            { id: 'sweep-values-help', class: 'help' },
            'Comma-separated whole numbers; 4k = 4096.',
          ),
          this.valuesError,
        ),
      ),
      this.status,
      el('div', { class: 'chart-box' }, this.canvas),
      this.table,
    );
  }

  /** The scenario changed (and is valid): sweep it again. */
  update(scenario: Scenario, capacity: Fit | null): void {
    this.scenario = scenario;
    this.capacity = capacity;
    this.markPending();
    this.scheduleRun();
  }

  /** What is shown no longer answers the inputs until the next sweep arrives. */
  private markPending(): void {
    if (!this.scenario) return;
    this.element.classList.add('pending');
    this.status.textContent = 'Sweeping…';
  }

  /** The scenario is invalid: drop what was shown, it no longer matches the inputs. */
  clear(note: string): void {
    this.scenario = null;
    this.requests.cancel();
    this.points = [];
    this.element.classList.remove('pending');
    this.status.textContent = note;
    this.render();
  }

  private async run(): Promise<void> {
    if (!this.scenario) return;
    const parsed = parseSweepValues(this.valuesInput.value);
    this.valuesError.hidden = !('error' in parsed);
    this.valuesError.textContent = 'error' in parsed ? parsed.error : '';
    if ('error' in parsed) this.valuesInput.setAttribute('aria-invalid', 'true');
    else this.valuesInput.removeAttribute('aria-invalid');
    if ('error' in parsed) {
      this.requests.cancel();
      this.points = [];
      this.element.classList.remove('pending');
      this.status.textContent = 'Fix the values to sweep.';
      this.render();
      return;
    }
    const vary = this.varySelect.value;
    const scenario = this.scenario;
    this.element.classList.add('pending');
    this.status.textContent = 'Sweeping…';
    try {
      const outcome = await this.requests.run((signal) =>
        sweep(scenario, vary, parsed.values, signal),
      );
      if (!outcome.current) return;
      this.points = outcome.value;
      const failed = this.points.filter((p) => p.error).length;
      this.status.textContent = `${this.points.length - failed} of ${this.points.length} values estimated`;
    } catch (error) {
      this.points = [];
      this.status.textContent = `Sweep failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.element.classList.remove('pending');
    this.render();
  }

  private render(): void {
    const vary = this.varySelect.value;
    const labels = this.points.map((p) => String(p.value));
    const line = (key: keyof NonNullable<SweepPoint['peak']>, label: string, color: string) => ({
      label,
      data: this.points.map((p) => (p.peak ? p.peak[key] / GIB : null)),
      borderColor: color,
      backgroundColor: color,
      spanGaps: false,
    });
    const datasets = [
      line('allocated_bytes', 'peak allocated', '#1f77b4'),
      line('reserved_bytes', 'peak reserved', '#ff7f0e'),
      line('device_bytes', 'device', '#2ca02c'),
    ];
    const capacityGiB = this.capacity ? this.capacity.usable_bytes / GIB : null;
    const plugins = {
      legend: { position: 'bottom' as const },
      capacityLine: {
        value: capacityGiB,
        label: this.capacity
          ? `${this.capacity.gpu}: ${gib(this.capacity.usable_bytes)} usable`
          : '',
      },
    };
    const top = Math.max(0, ...this.points.map((p) => (p.peak ? p.peak.device_bytes / GIB : 0)));
    const suggestedMax = Math.min(
      Math.max(top, capacityGiB ?? 0) * 1.08,
      Math.max(top, (capacityGiB ?? 0) * 4),
    );
    this.canvas.setAttribute(
      'aria-label',
      `Line chart of peak memory against ${SWEEP_LABELS[vary]} for ${this.points.length} values; the table below lists them.`,
    );
    this.chart?.destroy();
    this.chart = null;
    // Nothing to plot (invalid inputs or values): no empty axes either.
    this.canvas.parentElement!.hidden = this.points.length === 0;
    if (this.points.length === 0) return this.renderTable(vary);
    this.chart = new Chart(this.canvas, {
      type: 'line',
      data: { labels, datasets },
      plugins: [capacityLine],
      options: {
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: { title: { display: true, text: SWEEP_LABELS[vary] } },
          y: { beginAtZero: true, suggestedMax, title: { display: true, text: 'GiB per GPU' } },
        },
        plugins,
      },
    });
    this.renderTable(vary);
  }

  private renderTable(vary: string): void {
    const cell = (bytes: number) =>
      el('td', { class: 'num', title: exactBytes(bytes), 'data-bytes': String(bytes) }, gib(bytes));
    const rows = this.points.map((p) =>
      el(
        'tr',
        { 'data-value': String(p.value) },
        el('th', { scope: 'row' }, String(p.value)),
        p.peak
          ? [
              cell(p.peak.allocated_bytes),
              cell(p.peak.reserved_bytes),
              cell(p.peak.device_bytes),
              el('td', {}, p.verdict ?? '—'),
            ]
          : el('td', { colspan: '4', class: 'field-error' }, p.error?.message ?? 'no answer'),
      ),
    );
    replace(
      this.table,
      this.points.length === 0
        ? null
        : el(
            'table',
            {},
            el(
              'caption',
              { id: 'sweep-table-caption' },
              `Peak per GPU against ${SWEEP_LABELS[vary]}`,
            ),
            el(
              'thead',
              {},
              el(
                'tr',
                {},
                ...[SWEEP_LABELS[vary], 'Allocated', 'Reserved', 'Device', 'Fit'].map((h) =>
                  el('th', { scope: 'col' }, h),
                ),
              ),
            ),
            el('tbody', {}, rows),
          ),
    );
  }
}

/** POST /api/sweep; a server without it gets one estimate per value instead. */
async function sweep(
  scenario: Scenario,
  vary: string,
  values: number[],
  signal: AbortSignal,
): Promise<SweepPoint[]> {
  try {
    const result = await api.sweep({ scenario, vary, values }, signal);
    if (result.ok) return normaliseSweep(result.value, vary);
    // A sweep-level error (e.g. an unknown vary) applies to every value.
    return values.map((value) => ({ value, error: result.error }));
  } catch (error) {
    if (!(error instanceof TransportError)) throw error;
  }
  return Promise.all(
    values.map(async (value): Promise<SweepPoint> => {
      const result = await api.estimate({ ...scenario, [vary]: value }, signal);
      return result.ok
        ? { value, peak: result.value.peak, verdict: result.value.fit[0]?.verdict }
        : { value, error: result.error };
    }),
  );
}
