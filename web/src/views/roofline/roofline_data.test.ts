import { describe, expect, it } from 'vitest';
import {
  attainable,
  bytesText,
  chartRanges,
  decadeRange,
  decades,
  flopsText,
  logScale,
  opRows,
  plottable,
  roofKind,
  roofLine,
  roofsOf,
  secondsText,
  stepParts,
  type RooflineAnswer,
  type RooflineOp,
} from './roofline_data';

function op(over: Partial<RooflineOp>): RooflineOp {
  return {
    op: 'QKV projection',
    kind: 'matmul',
    pass: 'forward',
    formula: '2·n·h·(a+2g)·d',
    flops: 1e12,
    bytes: 1e9,
    intensity: 1000,
    ridge: 295,
    bound: 'compute',
    roofline_s: 1e-3,
    ...over,
  };
}

const ANSWER: RooflineAnswer = {
  gpu: {
    id: 'h100-80gb',
    compute_dtype: 'bf16',
    matmul_tflops: 1000,
    attention_tflops: 1000,
    vector_tflops: 50,
    hbm_gbps: 2000,
    matmul_ridge: 500,
    attention_ridge: 500,
    vector_ridge: 25,
  },
  cluster: { gpus_per_node: 8, intra_node_gbps: 450, inter_node_gbps: 50 },
  tokens_per_microbatch: 8192,
  sections: [
    {
      name: 'dense layer',
      layers: 32,
      flops: 3e12,
      bytes: 2e9,
      roofline_s: 3e-3,
      ops: [op({}), op({ pass: 'backward', flops: 2e12, roofline_s: 2e-3 })],
    },
    {
      name: 'LM head',
      layers: 1,
      flops: 1e9,
      bytes: 1e9,
      roofline_s: 5e-4,
      ops: [
        op({ op: 'norm', kind: 'elementwise', intensity: 0.5, flops: 1e8, roofline_s: 5e-4 }),
        op({ op: 'copy', kind: 'elementwise', intensity: 0, flops: 0, roofline_s: 1e-5 }),
      ],
    },
  ],
  step_time: {
    compute_s: 0.6,
    recompute_s: 0,
    tp_comm_s: 0.1,
    cp_comm_s: 0,
    ep_comm_s: 0,
    cpu_bound_s: 0,
    pp_bubble_s: 0.2,
    dp_comm_exposed_s: 0.05,
    optimizer_s: 0.05,
    offload_s: 0,
    step_time_s: 1,
    tokens_per_s_per_gpu: 5000,
    mfu: 0.4,
  },
  warnings: [],
};

describe('opRows', () => {
  it('lists every operation of every section in the answer’s order, with its section', () => {
    const rows = opRows(ANSWER);
    expect(rows.map((r) => [r.id, r.section, r.op, r.pass])).toEqual([
      ['0.0', 'dense layer', 'QKV projection', 'forward'],
      ['0.1', 'dense layer', 'QKV projection', 'backward'],
      ['1.0', 'LM head', 'norm', 'forward'],
      ['1.1', 'LM head', 'copy', 'forward'],
    ]);
    expect(rows[0].layers).toBe(32);
  });
});

describe('stepParts', () => {
  it('gives every exposed part with its share; the parts add up to the step', () => {
    const parts = stepParts(ANSWER.step_time);
    expect(parts).toHaveLength(10);
    expect(parts[0]).toMatchObject({ key: 'compute_s', seconds: 0.6, share: 0.6 });
    expect(parts.reduce((sum, p) => sum + p.seconds, 0)).toBeCloseTo(1, 12);
  });
  it('gives shares of 0 for a zero step rather than NaN', () => {
    const parts = stepParts({ ...ANSWER.step_time, step_time_s: 0 });
    expect(parts.every((p) => p.share === 0)).toBe(true);
  });
});

describe('text', () => {
  it('writes FLOPs, bytes and seconds with SI prefixes', () => {
    expect(flopsText(1.2345e12)).toBe('1.23 TFLOP');
    expect(flopsText(512)).toBe('512 FLOP');
    expect(bytesText(2.5e9)).toBe('2.5 GB');
    expect(secondsText(1.5)).toBe('1.5 s');
    expect(secondsText(0.0123)).toBe('12.3 ms');
    expect(secondsText(4.56e-5)).toBe('45.6 µs');
    expect(secondsText(0)).toBe('0 s');
  });
});

describe('chart geometry', () => {
  it('places an operation at its FLOPs over its ideal time', () => {
    expect(attainable(op({}))).toBe(1e15);
    expect(attainable(op({ roofline_s: 0 }))).toBe(0);
  });
  it('leaves operations without FLOPs or intensity off the log axes', () => {
    expect(
      opRows(ANSWER)
        .filter(plottable)
        .map((r) => r.id),
    ).toEqual(['0.0', '0.1', '1.0']);
  });
  it('maps kinds to the roof they run under', () => {
    expect(roofKind('grouped matmul')).toBe('matmul');
    expect(roofKind('attention')).toBe('attention');
    expect(roofKind('elementwise')).toBe('elementwise');
  });
  it('spans whole decades around the points and the roofs’ corners', () => {
    const { x, y } = chartRanges(ANSWER);
    expect(x).toEqual({ min: 0.1, max: 1000 });
    expect(y.min).toBe(1e11);
    expect(y.max).toBe(1e15);
    expect(decades({ min: 0.1, max: 100 })).toEqual([0.1, 1, 10, 100]);
    expect(decadeRange([])).toEqual({ min: 1, max: 10 });
    expect(decadeRange([5, 5])).toEqual({ min: 1, max: 10 });
  });
  it('scales logarithmically', () => {
    const scale = logScale({ min: 1, max: 1000 }, 300);
    expect(scale(1)).toBe(0);
    expect(scale(10)).toBeCloseTo(100, 10);
    expect(scale(1000)).toBeCloseTo(300, 10);
  });
  it('draws a roof as the bandwidth slope up to the ridge, then flat at the peak', () => {
    const [matmul] = roofsOf(ANSWER);
    const line = roofLine(matmul, 2000e9, { min: 0.1, max: 1000 }, { min: 1e11, max: 1e16 });
    expect(line[0]).toEqual([0.1, 0.1 * 2000e9]);
    expect(line[1]).toEqual([500, 1e15]);
    expect(line[2]).toEqual([1000, 1e15]);
  });
});
