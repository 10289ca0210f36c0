// The roofline view's data: the answer of POST /api/roofline (exactly `vramplan roofline --format
// json`), its operations as table rows, the step time as its parts, and the log-log geometry of
// the roofline chart. Pure, so that Vitest checks it without a browser.

export interface RooflineOp {
  op: string;
  /** "matmul" | "grouped matmul" | "attention" | "elementwise" */
  kind: string;
  /** "forward" | "backward" */
  pass: string;
  formula: string;
  flops: number;
  bytes: number;
  intensity: number;
  ridge: number;
  bound: 'memory' | 'compute';
  roofline_s: number;
}

export interface RooflineSection {
  name: string;
  layers: number;
  flops: number;
  bytes: number;
  roofline_s: number;
  ops: RooflineOp[];
}

export interface StepTimeParts {
  compute_s: number;
  recompute_s: number;
  tp_comm_s: number;
  cp_comm_s: number;
  ep_comm_s: number;
  cpu_bound_s: number;
  pp_bubble_s: number;
  dp_comm_exposed_s: number;
  optimizer_s: number;
  offload_s: number;
  step_time_s: number;
  tokens_per_s_per_gpu: number;
  mfu: number;
}

export interface RooflineAnswer {
  gpu: {
    id: string;
    compute_dtype: string;
    matmul_tflops: number;
    attention_tflops: number;
    vector_tflops: number;
    hbm_gbps: number;
    matmul_ridge: number;
    attention_ridge: number;
    vector_ridge: number;
  };
  cluster: { gpus_per_node: number; intra_node_gbps: number; inter_node_gbps: number };
  tokens_per_microbatch: number;
  sections: RooflineSection[];
  step_time: StepTimeParts;
  warnings: string[];
}

/** One line of the operation table: an operation of a section, one pass. */
export interface OpRow extends RooflineOp {
  section: string;
  layers: number;
  /** Its place in the answer, "section index.op index": the chart's point carries it too. */
  id: string;
}

export function opRows(answer: RooflineAnswer): OpRow[] {
  return answer.sections.flatMap((section, s) =>
    section.ops.map((op, o) => ({
      ...op,
      section: section.name,
      layers: section.layers,
      id: `${s}.${o}`,
    })),
  );
}

/** The exposed parts of a step, in the order the CLI prints them; they add up to the step. */
export const STEP_PARTS: [keyof StepTimeParts, string][] = [
  ['compute_s', 'Compute'],
  ['recompute_s', 'Recomputation'],
  ['tp_comm_s', 'Tensor-parallel communication'],
  ['cp_comm_s', 'Context-parallel communication'],
  ['ep_comm_s', 'Expert-parallel all-to-all'],
  ['cpu_bound_s', 'Waiting for the CPU'],
  ['pp_bubble_s', 'Pipeline bubble'],
  ['dp_comm_exposed_s', 'Data-parallel communication (exposed)'],
  ['optimizer_s', 'Optimizer update'],
  ['offload_s', 'Offload transfers and CPU optimizer (exposed)'],
];

export interface StepPart {
  key: keyof StepTimeParts;
  label: string;
  seconds: number;
  /** Share of the step, 0..1. */
  share: number;
}

export function stepParts(step: StepTimeParts): StepPart[] {
  return STEP_PARTS.map(([key, label]) => ({
    key,
    label,
    seconds: step[key],
    share: step.step_time_s > 0 ? step[key] / step.step_time_s : 0,
  }));
}

/** 1234567 -> "1.23 M"; SI prefixes up to P; below 1000 as is. */
export function siNumber(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return String(value);
  const prefixes = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
  let scaled = Math.abs(value);
  let i = 0;
  while (scaled >= 1000 && i < prefixes.length - 1) {
    scaled /= 1000;
    i += 1;
  }
  const sign = value < 0 ? '-' : '';
  return `${sign}${Number(scaled.toPrecision(digits))}${prefixes[i] ? ` ${prefixes[i]}` : ''}`;
}

export function flopsText(flops: number): string {
  return `${siNumber(flops)}FLOP`.replace(/(\d)FLOP$/, '$1 FLOP');
}

export function bytesText(bytes: number): string {
  return `${siNumber(bytes)}B`.replace(/(\d)B$/, '$1 B');
}

/** Seconds as s, ms or µs with three significant digits. */
export function secondsText(seconds: number): string {
  const abs = Math.abs(seconds);
  if (abs >= 1 || abs === 0) return `${Number(seconds.toPrecision(3))} s`;
  if (abs >= 1e-3) return `${Number((seconds * 1e3).toPrecision(3))} ms`;
  return `${Number((seconds * 1e6).toPrecision(3))} µs`;
}

// ---------------------------------------------------------------------------------------------
// The chart: x = arithmetic intensity (FLOP/byte), y = attainable FLOP/s, both logarithmic.

/** A compute roof: its peak (FLOP/s) and the intensity where the bandwidth slope meets it. */
export interface Roof {
  kind: 'matmul' | 'attention' | 'elementwise';
  label: string;
  peak: number;
  ridge: number;
}

export function roofsOf(answer: RooflineAnswer): Roof[] {
  const g = answer.gpu;
  return [
    { kind: 'matmul', label: 'matmul', peak: g.matmul_tflops * 1e12, ridge: g.matmul_ridge },
    {
      kind: 'attention',
      label: 'attention',
      peak: g.attention_tflops * 1e12,
      ridge: g.attention_ridge,
    },
    {
      kind: 'elementwise',
      label: 'element-wise',
      peak: g.vector_tflops * 1e12,
      ridge: g.vector_ridge,
    },
  ];
}

/** The roof an operation of `kind` runs under (grouped GEMMs under the matmul peak). */
export function roofKind(kind: string): Roof['kind'] {
  if (kind === 'attention') return 'attention';
  if (kind === 'elementwise') return 'elementwise';
  return 'matmul';
}

/** FLOP/s the roofline lets an operation reach: its FLOPs over its ideal time. */
export function attainable(op: RooflineOp): number {
  return op.roofline_s > 0 ? op.flops / op.roofline_s : 0;
}

/** An operation the chart can place (a positive intensity and FLOP/s on log axes). */
export function plottable(op: RooflineOp): boolean {
  return op.intensity > 0 && op.flops > 0 && attainable(op) > 0;
}

export interface LogRange {
  min: number;
  max: number;
}

/** Whole decades around every value (positive ones only), at least one decade wide. */
export function decadeRange(values: number[]): LogRange {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  if (positive.length === 0) return { min: 1, max: 10 };
  let lo = Math.floor(Math.log10(Math.min(...positive)));
  let hi = Math.ceil(Math.log10(Math.max(...positive)));
  if (hi <= lo) hi = lo + 1;
  return { min: 10 ** lo, max: 10 ** hi };
}

/** Maps a value of a log range onto [0, length]. */
export function logScale(range: LogRange, length: number): (v: number) => number {
  const lo = Math.log10(range.min);
  const span = Math.log10(range.max) - lo;
  return (v) => ((Math.log10(v) - lo) / span) * length;
}

/** The decades of a range: 1e0, 1e1, ... for axis ticks. */
export function decades(range: LogRange): number[] {
  const out: number[] = [];
  for (let e = Math.round(Math.log10(range.min)); e <= Math.round(Math.log10(range.max)); e++)
    out.push(10 ** e);
  return out;
}

/**
 * The chart's axes: intensities of every operation and every ridge, FLOP/s of every operation
 * and every roof, so that each point and each roof's corner is inside.
 */
export function chartRanges(answer: RooflineAnswer): { x: LogRange; y: LogRange } {
  const ops = opRows(answer).filter(plottable);
  const roofs = roofsOf(answer).filter((r) => r.peak > 0);
  return {
    x: decadeRange([...ops.map((o) => o.intensity), ...roofs.map((r) => r.ridge)]),
    y: decadeRange([...ops.map(attainable), ...roofs.map((r) => r.peak)]),
  };
}

/**
 * A roof as a polyline in data space over the x range: the bandwidth slope (FLOP/s = intensity ×
 * bandwidth) up to the ridge, then flat at the peak. Points below the y range are clipped to it.
 */
export function roofLine(roof: Roof, bandwidthBytesPerS: number, x: LogRange, y: LogRange) {
  const points: [number, number][] = [];
  // Where the slope enters the chart: at the left edge, or where it rises above the floor.
  const startX = Math.max(x.min, y.min / bandwidthBytesPerS);
  if (startX < roof.ridge) points.push([startX, startX * bandwidthBytesPerS]);
  const ridge = Math.min(Math.max(roof.ridge, x.min), x.max);
  points.push([ridge, Math.min(roof.peak, ridge * bandwidthBytesPerS)]);
  points.push([x.max, roof.peak]);
  return points;
}
