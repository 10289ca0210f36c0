// The serving estimate on screen: per-GPU memory, weights, KV cache and the capacity answer (max
// KV tokens and sequences at the engine's fraction) as cards; the rows of the binding pipeline
// rank as one stacked bar against the GPU, and as a table with every formula and source; the
// pipeline ranks, parameters, the Hub checkpoint, warnings and a fit card per catalog GPU.

import { append, el, replace } from '../../dom';
import { GIB, gib, groupDigits, paramCount } from '../../format';
import type { InferenceEstimate, Row } from '../../types';
import {
  breakdownTable,
  bytesCell,
  cardSection,
  chartSection,
  verdictCard,
} from '../result_widgets';
import { ResultsPanelBase } from '../results_panel';

/** One colour per kind of row; the weights of each module class get their own shade of blue. */
function rowColor(component: string, index: number): string {
  const c = component.toLowerCase();
  const table: [string, string][] = [
    ['attention', '#1f77b4'],
    ['mlp', '#4a98d3'],
    ['expert', '#0b4f85'],
    ['embedding', '#7fb3e0'],
    ['lm head', '#2f6f9f'],
    ['norm', '#9ecae1'],
    ['rotary', '#c6dbef'],
    ['kv cache', '#2ca02c'],
    ['activation', '#8c564b'],
    ['cuda graph', '#9467bd'],
    ['non-torch', '#bcbd22'],
    ['cuda context', '#637939'],
    ['nccl', '#8c6d31'],
  ];
  for (const [part, color] of table) if (c.includes(part)) return color;
  const spare = ['#843c39', '#7b4173', '#3182bd', '#31a354', '#756bb1', '#e6550d'];
  return spare[index % spare.length];
}

function countText(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : groupDigits(n);
}

export class InferenceResults extends ResultsPanelBase<InferenceEstimate> {
  private readonly canvas: HTMLCanvasElement;
  private readonly capacity: HTMLElement;
  private readonly ranks: HTMLElement;
  private readonly ranksCard: HTMLElement;

  constructor() {
    super('infer-cards');
    this.canvas = el('canvas', {
      id: 'infer-chart',
      role: 'img',
      'aria-label': 'Stacked bar of memory per GPU by component (not computed yet)',
      'aria-describedby': 'infer-table-caption',
    });
    this.capacity = el('div', { id: 'capacity' });
    this.ranks = el('div', { class: 'table-wrap', id: 'ranks' });
    this.ranksCard = cardSection('ranks-title', 'Pipeline ranks', this.ranks);
    append(this.body, [
      cardSection('capacity-title', 'KV cache capacity', this.capacity),
      chartSection('infer-chart-title', 'Memory per GPU', this.canvas),
      this.breakdownSection(),
      this.ranksCard,
      this.paramsAndWarnings('Warnings and notes'),
      this.fitSection(
        'Device memory per GPU (weights, the KV cache of the sequences asked for, the ' +
          'activation peak, graphs and overheads) against each GPU’s memory.',
      ),
    ]);
  }

  protected render(): void {
    this.renderCards();
    this.renderMini();
    this.renderCapacity();
    this.renderChart();
    this.renderTable();
    this.renderRanks();
    this.renderParams();
  }

  private renderCards(): void {
    const e = this.estimate!;
    const scenario = e.scenario as Record<string, unknown>;
    const card = (cls: string, title: string, value: HTMLElement, note: string) =>
      el(
        'div',
        { class: `peak-card ${cls}` },
        el('span', { class: 'peak-title' }, title),
        value,
        el('small', {}, note),
      );
    const capacityCards = e.capacity
      ? [
          card(
            'capacity',
            'Max KV tokens',
            el(
              'strong',
              {
                class: 'peak-value',
                id: 'infer-max-kv-tokens',
                'data-value': String(e.max_kv_tokens),
              },
              countText(e.max_kv_tokens),
            ),
            `at ${e.capacity.engine} fraction ${e.capacity.fraction}; every layer`,
          ),
          card(
            'capacity',
            'Max sequences',
            el(
              'strong',
              {
                class: 'peak-value',
                id: 'infer-max-sequences',
                'data-value': String(e.max_sequences),
              },
              countText(e.max_sequences),
            ),
            `of ${groupDigits(Number(scenario.context ?? 0))} tokens each`,
          ),
        ]
      : [];
    replace(
      this.cards,
      el(
        'p',
        { class: 'peak-stage' },
        'Per GPU of ',
        el('strong', { id: 'infer-layout' }, layoutText(scenario)),
        e.ranks.length > 1 ? ` · rows of pipeline rank ${e.binding_rank} (the binding one)` : '',
      ),
      el(
        'div',
        { class: 'peak-grid' },
        card(
          'device_bytes',
          'Device memory',
          bytesCell('strong', e.device_bytes, { class: 'peak-value', id: 'infer-device' }),
          `allocated ${gib(e.allocated_bytes)}, reserved ${gib(e.reserved_bytes)}`,
        ),
        card(
          'weights',
          'Weights',
          bytesCell('strong', e.weights_bytes, { class: 'peak-value', id: 'infer-weights' }),
          'every weight, scale and buffer',
        ),
        card(
          'kv',
          'KV cache',
          bytesCell('strong', e.kv_cache_bytes, { class: 'peak-value', id: 'infer-kv-cache' }),
          `${groupDigits(Number(scenario.batch ?? 1))} × ${gib(e.kv_bytes_per_sequence)} per sequence`,
        ),
        card(
          'kv',
          'KV bytes per token',
          el(
            'strong',
            {
              class: 'peak-value',
              id: 'infer-kv-per-token',
              'data-bytes': String(e.kv_bytes_per_token),
            },
            `${groupDigits(e.kv_bytes_per_token)} B`,
          ),
          'one token in every layer of this GPU',
        ),
        capacityCards,
        e.host_bytes
          ? card(
              'host',
              'Host memory',
              bytesCell('strong', e.host_bytes, { class: 'peak-value', id: 'infer-host' }),
              'pinned CPU memory of one GPU’s process (offload)',
            )
          : null,
        verdictCard(e.fit[0]),
      ),
    );
  }

  private renderMini(): void {
    const e = this.estimate!;
    this.showMini(
      el('strong', {}, gib(e.device_bytes)),
      ' per GPU',
      e.max_kv_tokens !== null
        ? [' · ', el('strong', {}, countText(e.max_kv_tokens)), ' KV tokens']
        : '',
    );
  }

  /** The KV cache's tiers when a host pool backs the GPU's (docs/offload.md, "Serving"). */
  private tiersList(): HTMLElement | null {
    const tiers = this.estimate!.kv_tiers ?? [];
    if (tiers.length < 2) return null;
    return el(
      'ul',
      { id: 'kv-tiers' },
      tiers.map((t) =>
        el(
          'li',
          { 'data-tier': t.tier, 'data-tokens': String(t.tokens), 'data-bytes': String(t.bytes) },
          el('strong', {}, t.tier),
          `: ${countText(t.tokens)} tokens in ${gib(t.bytes)} — `,
          el('span', { class: 'formula' }, t.formula),
        ),
      ),
    );
  }

  private renderCapacity(): void {
    const c = this.estimate!.capacity;
    if (!c) {
      replace(
        this.capacity,
        el(
          'p',
          { class: 'hint', id: 'capacity-hint' },
          'Set “GPU memory utilization (vLLM)” or “Static memory fraction (SGLang)” under ' +
            'Engine to see how many KV tokens and sequences fit.',
        ),
        this.tiersList(),
      );
      return;
    }
    const item = (term: string, value: HTMLElement | string) => [
      el('dt', {}, term),
      el('dd', {}, value),
    ];
    replace(
      this.capacity,
      el(
        'dl',
        { class: 'param-list' },
        item('Requested', bytesCell('span', c.requested_bytes)),
        item('KV budget', bytesCell('span', c.kv_budget_bytes, { id: 'capacity-budget' })),
        item('Blocks', countText(c.num_blocks)),
        item('Max KV tokens', countText(c.max_kv_tokens)),
        item('Max sequences', countText(c.max_sequences)),
        c.shortfall_bytes > 0
          ? item('Short by', bytesCell('span', c.shortfall_bytes, { class: 'field-error' }))
          : null,
      ),
      el('p', { class: 'formula', id: 'capacity-formula' }, c.formula),
      el('p', { class: 'source hint' }, c.source),
      this.tiersList(),
    );
  }

  private renderChart(): void {
    const e = this.estimate!;
    const capacity = e.fit[0];
    this.canvas.setAttribute(
      'aria-label',
      `Stacked bar of memory per GPU: ${gib(e.device_bytes)} of device memory in ` +
        `${e.rows.length} parts` +
        (capacity ? ` against ${gib(capacity.usable_bytes)} on ${capacity.gpu}` : '') +
        '. The breakdown table below lists every value.',
    );
    this.drawStackedBars(this.canvas, {
      labels: [e.ranks.length > 1 ? `per GPU (pipeline rank ${e.binding_rank})` : 'per GPU'],
      // Host rows (offload) are not GPU memory: the table lists them, the bar leaves them out.
      segments: e.rows
        .filter((row: Row) => row.counts_toward !== 'host')
        .map((row: Row, index: number) => ({
          label: row.component,
          color: rowColor(row.component, index),
          data: [row.bytes / GIB],
        })),
      maxBarThickness: 180,
      tallestGiB: e.device_bytes / GIB,
      // Beside the single bar on wide screens, below it on phones.
      legend: window.innerWidth < 700 ? 'bottom' : 'right',
      tooltip: (label, gibValue) => `${label}: ${gibValue.toFixed(2)} GiB`,
      capacityLabel: capacity ? `${capacity.gpu}: ${gib(capacity.usable_bytes)}` : '',
    });
  }

  private renderTable(): void {
    const e = this.estimate!;
    replace(
      this.table,
      breakdownTable(
        'infer-table-caption',
        [
          e.ranks.length > 1
            ? `Per GPU of pipeline rank ${e.binding_rank}, the one that binds`
            : 'Per GPU',
        ],
        e.rows,
        e,
      ),
    );
  }

  private renderRanks(): void {
    const e = this.estimate!;
    this.ranksCard.hidden = e.ranks.length < 2;
    if (e.ranks.length < 2) return;
    const head = [
      'Rank',
      'Layers',
      'Weights',
      'KV per token',
      'Activations',
      'Device',
      'Max KV tokens',
    ];
    replace(
      this.ranks,
      el(
        'table',
        {},
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
          e.ranks.map((r) =>
            el(
              'tr',
              { 'data-rank': String(r.rank) },
              el('th', { scope: 'row' }, r.name ?? `rank ${r.rank}`),
              el('td', { class: 'num' }, String(r.layers)),
              bytesCell('td', r.weights_bytes, { class: 'num' }),
              el('td', { class: 'num' }, `${groupDigits(r.kv_bytes_per_token)} B`),
              bytesCell('td', r.activation_bytes, { class: 'num' }),
              bytesCell('td', r.device_bytes, { class: 'num' }),
              el('td', { class: 'num' }, countText(r.max_kv_tokens)),
            ),
          ),
        ),
      ),
    );
  }

  private renderParams(): void {
    const e = this.estimate!;
    const p = e.parameters;
    const checkpoint = e.checkpoint;
    replace(
      this.params,
      el(
        'dl',
        { class: 'param-list' },
        el('dt', {}, 'Total'),
        el('dd', {}, `${paramCount(p.total)} (${groupDigits(p.total)})`),
        el('dt', {}, 'Active per token'),
        el('dd', {}, `${paramCount(p.active)} (${groupDigits(p.active)})`),
        checkpoint?.available && checkpoint.total_bytes !== undefined
          ? [
              el('dt', {}, 'Checkpoint on the Hub'),
              el('dd', {}, bytesCell('span', checkpoint.total_bytes)),
            ]
          : null,
      ),
    );
  }
}

/** "TP 2 · PP 1 · 8,192 tokens × 4 sequences · vLLM" from the resolved scenario. */
function layoutText(s: Record<string, unknown>): string {
  const parts = [`TP ${s.tp ?? 1}`];
  if (Number(s.pp ?? 1) > 1) parts.push(`PP ${s.pp}`);
  if (Number(s.ep ?? 1) > 1) parts.push(`EP ${s.ep}`);
  if (Number(s.dp ?? 1) > 1) parts.push(`DP ${s.dp}`);
  parts.push(
    `${groupDigits(Number(s.context ?? 0))} tokens × ${groupDigits(Number(s.batch ?? 1))}`,
  );
  parts.push(String(s.engine ?? 'vllm'));
  return parts.join(' · ');
}
