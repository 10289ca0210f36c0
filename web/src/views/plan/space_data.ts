// The plan's space of fitting layouts (/api/plan "space", docs/planner.md): its points' types,
// the dimensions the chart filters on, the Pareto front, the scenario that opens a point in the
// estimate view, and the axes' ticks. Pure, so Vitest checks it.

import type { Scenario } from '../../types';

/** Points a search asks for besides the Pareto front (the server thins the rest on a grid). */
export const SPACE_POINTS = 1500;

export interface SpacePoint {
  layout: string;
  sharding: string;
  /** "" when the layout offloads nothing. */
  offload: string;
  allocated_bytes: number;
  reserved_bytes: number;
  device_bytes: number;
  host_bytes: number;
  tokens_per_s_per_gpu: number;
  step_time_s: number;
  mfu: number;
  pareto: boolean;
  /** Its place in the top K; 0 when not a candidate. */
  rank: number;
  /** The layout's scenario keys (tp, pp, micro_batch, recompute, zero, ...). */
  scenario: Scenario;
}

export interface PlanSpace {
  fitting: number;
  shown: number;
  cap: number;
  thinned: boolean;
  grid: { memory_cells: number; speed_cell_octaves: number };
  /** The settings every point shares; a point's scenario keys go over them. */
  base_scenario: Scenario;
  points: SpacePoint[];
  /** Indices into points of the Pareto front, by peak memory ascending. */
  pareto: number[];
}

/** One dimension the chart filters on: its label and a point's value as text. */
export interface Dimension {
  key: string;
  label: string;
  value: (point: SpacePoint) => string;
}

const fromScenario =
  (key: string) =>
  (point: SpacePoint): string => {
    const v = point.scenario[key];
    return v === undefined || v === null ? '' : String(v);
  };

export const DIMENSIONS: Dimension[] = [
  { key: 'tp', label: 'TP', value: fromScenario('tp') },
  { key: 'pp', label: 'PP', value: fromScenario('pp') },
  { key: 'vpp', label: 'Virtual stages', value: fromScenario('vpp') },
  { key: 'cp', label: 'CP', value: fromScenario('cp') },
  { key: 'ep', label: 'EP', value: fromScenario('ep') },
  { key: 'etp', label: 'Expert TP', value: fromScenario('etp') },
  { key: 'dp', label: 'DP', value: fromScenario('dp') },
  { key: 'micro_batch', label: 'Micro-batch', value: fromScenario('micro_batch') },
  { key: 'recompute', label: 'Recompute', value: fromScenario('recompute') },
  { key: 'sharding', label: 'Sharding', value: (p) => p.sharding },
  { key: 'offload', label: 'Offload', value: (p) => p.offload || 'none' },
];

/** Numbers in numeric order, then text in alphabetical order. */
function byValue(a: string, b: string): number {
  const x = Number(a);
  const y = Number(b);
  const numeric = a !== '' && b !== '' && Number.isFinite(x) && Number.isFinite(y);
  return numeric ? x - y : a.localeCompare(b);
}

/** The dimensions that vary among `points`, each with its values present (sorted). */
export function dimensionValues(
  points: SpacePoint[],
  dims: Dimension[] = DIMENSIONS,
): { dim: Dimension; values: string[] }[] {
  const out: { dim: Dimension; values: string[] }[] = [];
  for (const dim of dims) {
    const values = Array.from(new Set(points.map(dim.value))).sort(byValue);
    if (values.length > 1) out.push({ dim, values });
  }
  return out;
}

/** Values switched off, per dimension key. */
export type Exclusions = Map<string, Set<string>>;

/** Whether `point` passes the filters: none of its values is switched off. */
export function passes(
  point: SpacePoint,
  excluded: Exclusions,
  dims: Dimension[] = DIMENSIONS,
): boolean {
  for (const dim of dims) {
    const off = excluded.get(dim.key);
    if (off && off.size > 0 && off.has(dim.value(point))) return false;
  }
  return true;
}

/**
 * The Pareto front of `points` (least peak device memory, most tokens/s per GPU): the indices of
 * the points no other beats on both with one strictly, one per (memory, speed) pair, by memory
 * ascending.
 */
export function paretoFront(points: SpacePoint[]): number[] {
  const order = points
    .map((_, i) => i)
    .sort(
      (a, b) =>
        points[a].device_bytes - points[b].device_bytes ||
        points[b].tokens_per_s_per_gpu - points[a].tokens_per_s_per_gpu,
    );
  const front: number[] = [];
  let best = -Infinity;
  for (const i of order) {
    if (points[i].tokens_per_s_per_gpu > best) {
      front.push(i);
      best = points[i].tokens_per_s_per_gpu;
    }
  }
  return front;
}

/** The settings that open `point` in the estimate view: the shared ones with its layout. */
export function pointScenario(space: PlanSpace, point: SpacePoint): Scenario {
  return { ...space.base_scenario, ...point.scenario };
}

/** About `count` round tick values from 0 to at least `max` (1, 2 or 5 times a power of ten). */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let v = 0; v < max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1] < max) ticks.push(Number((ticks.length * step).toPrecision(12)));
  return ticks;
}

/** "tp4 sp pp2 ... — 61.2 GiB, 3,512 tokens/s per GPU (Pareto front, #1)" */
export function pointTitle(point: SpacePoint): string {
  const gib = (point.device_bytes / 2 ** 30).toFixed(1);
  const speed = Math.round(point.tokens_per_s_per_gpu).toLocaleString('en-US');
  const marks = [point.pareto ? 'Pareto front' : '', point.rank > 0 ? `#${point.rank}` : '']
    .filter(Boolean)
    .join(', ');
  return `${point.layout}: ${gib} GiB, ${speed} tokens/s per GPU${marks ? ` (${marks})` : ''}`;
}

/** The chart's summary line: how many layouts fit and how many are drawn. */
export function spaceSummary(space: PlanSpace): string {
  const fit = space.fitting.toLocaleString('en-US');
  const shown = space.shown.toLocaleString('en-US');
  const front = space.pareto.length;
  return space.thinned
    ? `${shown} of ${fit} fitting layouts drawn: all ${front} on the Pareto front, the rest ` +
        `sampled one per cell of a ${space.grid.memory_cells}-column grid in peak memory and ` +
        `tokens/s.`
    : `All ${fit} fitting layouts drawn (${front} on the Pareto front).`;
}
