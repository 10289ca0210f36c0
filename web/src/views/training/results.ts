// The estimate on screen: peak in the three quantities, the stacked breakdown per pipeline
// stage, the breakdown table (formula and source of every row), parameters, GPU fit, warnings.

import { componentColor } from '../../charts';
import { append, el, replace } from '../../dom';
import { GIB, gib, gibFixed, groupDigits, paramCount } from '../../format';
import { offGpu, type Estimate, type Peak, type Stage } from '../../types';
import { breakdownTable, bytesCell, chartSection, verdictCard } from '../result_widgets';
import { ResultsPanelBase } from '../results_panel';

const QUANTITIES = [
  ['allocated_bytes', 'Peak allocated', 'torch.cuda.max_memory_allocated'],
  ['reserved_bytes', 'Peak reserved', 'torch.cuda.max_memory_reserved: the allocator pool'],
  ['device_bytes', 'Device memory', 'what nvidia-smi shows: reserved + CUDA context + NCCL'],
] as const;

export class ResultsPanel extends ResultsPanelBase<Estimate> {
  private readonly canvas: HTMLCanvasElement;
  private readonly stageSelect: HTMLSelectElement;
  private chosenStage: string | null = null;

  constructor() {
    super('peak');
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
    append(this.body, [
      chartSection('chart-title', 'Memory per GPU, by pipeline stage', this.canvas),
      this.breakdownSection(
        el(
          'div',
          { class: 'stage-picker no-print' },
          el('label', { for: 'stage-select' }, 'Pipeline stage'),
          this.stageSelect,
        ),
      ),
      this.paramsAndWarnings('Warnings'),
      this.fitSection(
        'Device memory against each GPU’s usable memory; “tight” is above 80%, the margin below ' +
          'which Fujii et al. saw no out-of-memory failures.',
      ),
    ]);
  }

  protected render(): void {
    this.renderPeak();
    this.renderMini();
    this.renderChart();
    this.renderStagePicker();
    this.renderTable();
    this.renderParams();
  }

  private renderPeak(): void {
    const e = this.estimate!;
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
    replace(
      this.cards,
      el(
        'p',
        { class: 'peak-stage' },
        'Peak on ',
        el('strong', { id: 'peak-stage' }, e.peak.stage),
        e.peak.phase ? [', during ', el('strong', { id: 'peak-phase' }, e.peak.phase)] : null,
        this.layoutText(),
      ),
      el('div', { class: 'peak-grid' }, cards, verdictCard(e.fit[0])),
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
    this.showMini(
      'Peak ',
      el('strong', {}, gib(e.peak.allocated_bytes)),
      ' allocated · ',
      el('strong', {}, gib(e.peak.device_bytes)),
      ' device',
      ...(e.peak.host_bytes ? [' · ', el('strong', {}, gib(e.peak.host_bytes)), ' host'] : []),
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
    // The chart is GPU memory: rows moved to the host or disk are in the table, not the bars.
    for (const stage of e.stages)
      for (const row of stage.rows)
        if (!offGpu(row.counts_toward) && !components.includes(row.component))
          components.push(row.component);
    const capacity = e.fit[0];
    this.canvas.setAttribute(
      'aria-label',
      `Stacked bar chart of memory per GPU for ${e.stages.length} pipeline stage(s); the peak stage ` +
        `${e.peak.stage} uses ${gib(e.peak.device_bytes)} of device memory` +
        (capacity ? ` against ${gib(capacity.usable_bytes)} usable on ${capacity.gpu}` : '') +
        '. The breakdown table below lists every value.',
    );
    this.drawStackedBars(this.canvas, {
      labels: e.stages.map((s) => s.name),
      segments: components.map((component, index) => ({
        label: component,
        color: componentColor(component, index),
        data: e.stages.map((stage) => sumComponent(stage, component) / GIB),
      })),
      maxBarThickness: 140,
      tallestGiB: Math.max(...e.stages.map((s) => s.device_bytes / GIB), 0),
      legend: 'bottom',
      tooltip: (label, gibValue) =>
        `${label}: ${gibValue.toFixed(2)} GiB (${groupDigits(Math.round(gibValue * GIB))} bytes)`,
      capacityLabel: capacity ? `${capacity.gpu}: ${gib(capacity.usable_bytes)} usable` : '',
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
    const ranks = stage.ranks.length ? `ranks ${stage.ranks.join(', ')}` : '';
    replace(
      this.table,
      breakdownTable(
        'breakdown-table-caption',
        [
          `${stage.name}: ${stage.layers} layer${stage.layers === 1 ? '' : 's'}, `,
          `${stage.in_flight_microbatches} microbatch(es) in flight${ranks ? `, ${ranks}` : ''}`,
        ],
        stage.rows,
        stage,
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
