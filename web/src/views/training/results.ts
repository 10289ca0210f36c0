// The estimate on screen: peak in the three quantities, the stacked breakdown per pipeline
// stage, the breakdown table (formula and source of every row), parameters, GPU fit, warnings.

import { Chart, capacityLine, componentColor } from '../../charts';
import { el, replace } from '../../dom';
import { GIB, gib, gibFixed, groupDigits, paramCount, percent } from '../../format';
import type { ApiError, Estimate, Peak, Stage } from '../../types';
import { bytesCell, fitCard, verdictText, warningList } from '../../widgets';

const QUANTITIES = [
  ['allocated_bytes', 'Peak allocated', 'torch.cuda.max_memory_allocated'],
  ['reserved_bytes', 'Peak reserved', 'torch.cuda.max_memory_reserved: the allocator pool'],
  ['device_bytes', 'Device memory', 'what nvidia-smi shows: reserved + CUDA context + NCCL'],
] as const;

export class ResultsPanel {
  readonly element: HTMLElement;
  /** The peak in one line, fixed at the bottom of phone screens (hidden on wide ones). */
  readonly mini: HTMLElement;
  private readonly status: HTMLElement;
  private readonly peak: HTMLElement;
  private readonly body: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly stageSelect: HTMLSelectElement;
  private readonly table: HTMLElement;
  private readonly params: HTMLElement;
  private readonly fit: HTMLElement;
  private readonly warnings: HTMLElement;
  private chart: Chart | null = null;
  private estimate: Estimate | null = null;
  private chosenStage: string | null = null;

  constructor() {
    this.status = el('p', { class: 'status', id: 'results-status', role: 'status' });
    this.peak = el('div', { class: 'peak-cards', id: 'peak', 'aria-live': 'polite' });
    this.canvas = el('canvas', {
      id: 'breakdown-chart',
      role: 'img',
      'aria-label': 'Stacked bar chart of memory per GPU by pipeline stage (not computed yet)',
      'aria-describedby': 'breakdown-table-caption',
    });
    this.stageSelect = el('select', {
      id: 'stage-select',
      onchange: () => {
        this.chosenStage = this.stageSelect.value;
        this.renderTable();
      },
    });
    // Focusable so that keyboard users can scroll a wide table on a narrow screen.
    this.table = el('div', {
      class: 'table-wrap',
      id: 'breakdown',
      tabindex: '0',
      role: 'region',
      'aria-label': 'Breakdown table',
    });
    this.params = el('div', { class: 'params', id: 'parameters' });
    this.fit = el('div', { class: 'fit-cards', id: 'fit' });
    this.warnings = el('div', { class: 'warnings', id: 'warnings' });
    this.body = el(
      'div',
      { class: 'results-body' },
      el(
        'section',
        { class: 'card chart-card', 'aria-labelledby': 'chart-title' },
        el('h3', { id: 'chart-title' }, 'Memory per GPU, by pipeline stage'),
        el('div', { class: 'chart-box' }, this.canvas),
      ),
      el(
        'section',
        { class: 'card', 'aria-labelledby': 'table-title' },
        el('h3', { id: 'table-title' }, 'Breakdown'),
        el(
          'div',
          { class: 'stage-picker no-print' },
          el('label', { for: 'stage-select' }, 'Pipeline stage'),
          this.stageSelect,
        ),
        this.table,
      ),
      el(
        'div',
        { class: 'two-col' },
        el(
          'section',
          { class: 'card', 'aria-labelledby': 'params-title' },
          el('h3', { id: 'params-title' }, 'Parameters'),
          this.params,
        ),
        el(
          'section',
          { class: 'card', 'aria-labelledby': 'warnings-title' },
          el('h3', { id: 'warnings-title' }, 'Warnings'),
          this.warnings,
        ),
      ),
      el(
        'section',
        { class: 'card', 'aria-labelledby': 'fit-title' },
        el('h3', { id: 'fit-title' }, 'Does it fit?'),
        el(
          'p',
          { class: 'hint' },
          'Device memory against each GPU’s usable memory; “tight” is above 80%, the margin below ' +
            'which Fujii et al. saw no out-of-memory failures.',
        ),
        this.fit,
      ),
    );
    this.mini = el('div', { class: 'mini-peak no-print', id: 'mini-peak' });
    this.element = el(
      'section',
      { class: 'results', id: 'results', 'aria-labelledby': 'results-title' },
      el('h2', { id: 'results-title', class: 'sr-only' }, 'Results'),
      this.status,
      this.peak,
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
      this.peak,
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

  show(estimate: Estimate): void {
    this.estimate = estimate;
    this.element.classList.remove('pending', 'invalid');
    this.element.removeAttribute('aria-busy');
    this.body.hidden = false;
    this.status.textContent = 'Up to date';
    this.renderPeak();
    this.renderMini();
    this.renderChart();
    this.renderStagePicker();
    this.renderTable();
    this.renderParams();
    this.renderFit();
    this.renderWarnings();
  }

  current(): Estimate | null {
    return this.estimate;
  }

  private renderPeak(): void {
    const e = this.estimate!;
    const chosen = e.fit[0];
    const cards = QUANTITIES.map(([key, title, meaning]) => {
      const id = key.replace('_bytes', '');
      return el(
        'div',
        { class: `peak-card ${key}` },
        el('span', { class: 'peak-title' }, title),
        bytesCell('strong', e.peak[key], { class: 'peak-value', id: `peak-${id}` }),
        bandText(e.peak, key, `peak-${id}-band`),
        el('small', {}, meaning),
      );
    });
    const verdict = chosen
      ? el(
          'div',
          { class: `peak-card verdict verdict-${chosen.verdict}` },
          el('span', { class: 'peak-title' }, chosen.name ?? chosen.gpu),
          el('strong', { class: 'peak-value', id: 'peak-verdict' }, verdictText(chosen.verdict)),
          el('small', {}, `${percent(chosen.used_fraction)} of ${gib(chosen.usable_bytes)} usable`),
        )
      : null;
    replace(
      this.peak,
      el(
        'p',
        { class: 'peak-stage' },
        'Peak on ',
        el('strong', { id: 'peak-stage' }, e.peak.stage),
        e.peak.phase ? [', during ', el('strong', { id: 'peak-phase' }, e.peak.phase)] : null,
        this.layoutText(),
      ),
      el('div', { class: 'peak-grid' }, cards, verdict),
      this.phaseList(),
    );
  }

  /** Allocated memory in each phase of the peak stage's step, the peak phase marked. */
  private phaseList(): HTMLElement | null {
    const e = this.estimate!;
    const stage = e.stages.find((s) => s.name === e.peak.stage);
    if (!stage?.phases?.length) return null;
    return el(
      'p',
      { class: 'phases', id: 'peak-phases' },
      'Allocated by phase: ',
      stage.phases.flatMap((p, i) => [
        i ? ' · ' : '',
        el(
          p.name === stage.peak_phase ? 'strong' : 'span',
          { 'data-phase': p.name, 'data-bytes': String(p.allocated_bytes) },
          `${p.name} ${gib(p.allocated_bytes)}`,
          p.name === stage.peak_phase ? ' (peak)' : '',
        ),
      ]),
    );
  }

  private renderMini(): void {
    const e = this.estimate!;
    const chosen = e.fit[0];
    this.mini.classList.remove('pending');
    replace(
      this.mini,
      el(
        'span',
        {},
        'Peak ',
        el('strong', {}, gib(e.peak.allocated_bytes)),
        ' allocated · ',
        el('strong', {}, gib(e.peak.device_bytes)),
        ' device',
        chosen ? ` · ${verdictText(chosen.verdict)} on ${chosen.gpu}` : '',
      ),
      el('a', { href: '#results' }, 'Results'),
    );
  }

  private layoutText(): string {
    const e = this.estimate!;
    const parts: string[] = [];
    if (e.world_size !== undefined)
      parts.push(`${e.world_size} GPU${e.world_size === 1 ? '' : 's'}`);
    if (e.microbatches !== undefined)
      parts.push(`${e.microbatches} microbatch${e.microbatches === 1 ? '' : 'es'} per step`);
    return parts.length ? ` · ${parts.join(' · ')}` : '';
  }

  private renderChart(): void {
    const e = this.estimate!;
    const components: string[] = [];
    for (const stage of e.stages)
      for (const row of stage.rows)
        if (!components.includes(row.component)) components.push(row.component);
    const datasets = components.map((component, index) => ({
      label: component,
      backgroundColor: componentColor(component, index),
      data: e.stages.map((stage) => sumComponent(stage, component) / GIB),
      stack: 'memory',
      maxBarThickness: 140,
    }));
    const capacity = e.fit[0];
    const capacityGiB = capacity ? capacity.usable_bytes / GIB : null;
    const labels = e.stages.map((s) => s.name);
    this.canvas.setAttribute(
      'aria-label',
      `Stacked bar chart of memory per GPU for ${e.stages.length} pipeline stage(s); the peak stage ` +
        `${e.peak.stage} uses ${gib(e.peak.device_bytes)} of device memory` +
        (capacity ? ` against ${gib(capacity.usable_bytes)} usable on ${capacity.gpu}` : '') +
        '. The breakdown table below lists every value.',
    );
    const plugins = {
      legend: { position: 'bottom' as const },
      tooltip: {
        callbacks: {
          label: (item: { dataset: { label?: string }; raw: unknown }) =>
            `${item.dataset.label}: ${(item.raw as number).toFixed(2)} GiB (${groupDigits(Math.round((item.raw as number) * GIB))} bytes)`,
        },
      },
      capacityLine: {
        value: capacityGiB,
        label: capacity ? `${capacity.gpu}: ${gib(capacity.usable_bytes)} usable` : '',
      },
    };
    const maxStack = Math.max(...e.stages.map((s) => s.device_bytes / GIB), 0);
    const suggestedMax = Math.max(maxStack, capacityGiB ?? 0) * 1.08;
    // A new chart per answer: cheap without animation, and no stale options survive.
    this.chart?.destroy();
    this.chart = new Chart(this.canvas, {
      type: 'bar',
      data: { labels, datasets },
      plugins: [capacityLine],
      options: {
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: { stacked: true },
          y: {
            stacked: true,
            beginAtZero: true,
            suggestedMax,
            title: { display: true, text: 'GiB per GPU' },
          },
        },
        plugins,
      },
    });
  }

  private renderStagePicker(): void {
    const e = this.estimate!;
    const names = e.stages.map((s) => s.name);
    if (!this.chosenStage || !names.includes(this.chosenStage)) this.chosenStage = e.peak.stage;
    replace(
      this.stageSelect,
      ...names.map((name) =>
        el('option', { value: name }, name === e.peak.stage ? `${name} (peak)` : name),
      ),
    );
    this.stageSelect.value = this.chosenStage;
    this.stageSelect.disabled = names.length < 2;
  }

  private renderTable(): void {
    const e = this.estimate!;
    const stage = e.stages.find((s) => s.name === this.chosenStage) ?? e.stages[0];
    if (!stage) {
      replace(this.table, el('p', {}, 'No stages.'));
      return;
    }
    const rows = stage.rows.map((row) =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, row.component),
        bytesCell('td', row.bytes, { class: 'num' }),
        el('td', {}, row.counts_toward),
        el('td', { class: 'formula' }, row.formula),
        el('td', { class: 'source' }, row.source),
      ),
    );
    const total = (label: string, bytes: number) =>
      el(
        'tr',
        { class: 'total' },
        el('th', { scope: 'row' }, label),
        bytesCell('td', bytes, { class: 'num' }),
        el('td', { colspan: '3' }),
      );
    const ranks = stage.ranks.length ? `ranks ${stage.ranks.join(', ')}` : '';
    replace(
      this.table,
      el(
        'table',
        { class: 'breakdown-table' },
        el(
          'caption',
          { id: 'breakdown-table-caption' },
          `${stage.name}: ${stage.layers} layer${stage.layers === 1 ? '' : 's'}, `,
          `${stage.in_flight_microbatches} microbatch(es) in flight${ranks ? `, ${ranks}` : ''}`,
        ),
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
        el('tbody', {}, rows),
        el(
          'tfoot',
          {},
          total('Allocated', stage.allocated_bytes),
          total('Reserved', stage.reserved_bytes),
          total('Device', stage.device_bytes),
        ),
      ),
    );
  }

  private renderParams(): void {
    const p = this.estimate!.parameters;
    const item = (term: string, n: number | undefined) =>
      n === undefined
        ? null
        : [
            el('dt', {}, term),
            el('dd', { title: groupDigits(n) }, `${paramCount(n)} (${groupDigits(n)})`),
          ];
    replace(
      this.params,
      el(
        'dl',
        { class: 'param-list' },
        item('Total', p.total),
        item('Active per token', p.active),
        ...(p.breakdown ?? []).map((b) => item(b.name, b.count)),
      ),
    );
  }

  private renderFit(): void {
    const cards = this.estimate!.fit.map((f, index) => fitCard(f, index === 0));
    replace(this.fit, cards);
  }

  private renderWarnings(): void {
    replace(this.warnings, warningList(this.estimate!.warnings));
  }
}

function sumComponent(stage: Stage, component: string): number {
  return stage.rows.filter((r) => r.component === component).reduce((sum, r) => sum + r.bytes, 0);
}

/** "likely 44.10–52.60 GiB": where the measured value fell for 80% of the validated runs. */
function bandText(
  peak: Peak,
  key: 'allocated_bytes' | 'reserved_bytes' | 'device_bytes',
  id: string,
): HTMLElement | null {
  const low = peak[`${key}_low`];
  const high = peak[`${key}_high`];
  if (low === undefined || high === undefined) return null;
  return el(
    'span',
    {
      class: 'band',
      id,
      'data-low': String(low),
      'data-high': String(high),
      title: 'Where the measured value fell for 80% of the validated runs (vramplan validate)',
    },
    `likely ${gibFixed(low, 2)}–${gib(high)}`,
  );
}
