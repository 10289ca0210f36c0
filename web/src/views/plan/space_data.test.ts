import { describe, expect, it } from 'vitest';
import {
  DIMENSIONS,
  dimensionValues,
  niceTicks,
  paretoFront,
  passes,
  pointScenario,
  pointTitle,
  spaceSummary,
  type Exclusions,
  type PlanSpace,
  type SpacePoint,
} from './space_data';

function point(
  layout: string,
  gib: number,
  speed: number,
  scenario: Record<string, unknown> = {},
  extra: Partial<SpacePoint> = {},
): SpacePoint {
  return {
    layout,
    sharding: 'zero1',
    offload: '',
    allocated_bytes: gib * 2 ** 30,
    reserved_bytes: gib * 2 ** 30,
    device_bytes: gib * 2 ** 30,
    host_bytes: 0,
    tokens_per_s_per_gpu: speed,
    step_time_s: 1,
    mfu: 0.4,
    pareto: false,
    rank: 0,
    scenario: { tp: 1, pp: 1, micro_batch: 1, recompute: 'none', ...scenario },
    ...extra,
  };
}

describe('paretoFront', () => {
  it('keeps the points no other beats on memory and speed, by memory', () => {
    const points = [
      point('a', 40, 100), // dominated by d (less memory, faster)
      point('b', 20, 50),
      point('c', 60, 300),
      point('d', 30, 120),
      point('e', 60, 200), // same memory as c, slower
      point('f', 70, 300), // as fast as c with more memory
    ];
    expect(paretoFront(points).map((i) => points[i].layout)).toEqual(['b', 'd', 'c']);
  });

  it('matches a brute force on random points', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 50;
    const points = Array.from({ length: 300 }, (_, i) =>
      point(`p${i}`, Math.round(random()), Math.round(random())),
    );
    const dominated = (p: SpacePoint) =>
      points.some(
        (q) =>
          q.device_bytes <= p.device_bytes &&
          q.tokens_per_s_per_gpu >= p.tokens_per_s_per_gpu &&
          (q.device_bytes < p.device_bytes || q.tokens_per_s_per_gpu > p.tokens_per_s_per_gpu),
      );
    const want = new Set(
      points.filter((p) => !dominated(p)).map((p) => `${p.device_bytes}/${p.tokens_per_s_per_gpu}`),
    );
    const got = paretoFront(points).map(
      (i) => `${points[i].device_bytes}/${points[i].tokens_per_s_per_gpu}`,
    );
    expect(new Set(got)).toEqual(want);
    expect(got.length).toBe(want.size);
  });
});

describe('filters', () => {
  const points = [
    point('a', 10, 1, { tp: 1, recompute: 'none' }),
    point('b', 20, 2, { tp: 2, recompute: 'full' }),
    point('c', 30, 3, { tp: 8, recompute: 'none' }, { sharding: 'fsdp=full_shard' }),
  ];

  it('offers the dimensions that vary, with their values in order', () => {
    const dims = dimensionValues(points);
    expect(dims.map((d) => d.dim.key)).toEqual(['tp', 'recompute', 'sharding']);
    expect(dims[0].values).toEqual(['1', '2', '8']);
    expect(dims[1].values).toEqual(['full', 'none']);
  });

  it('greys out a point whose value is switched off in any dimension', () => {
    const excluded: Exclusions = new Map([['tp', new Set(['2'])]]);
    expect(points.map((p) => passes(p, excluded))).toEqual([true, false, true]);
    excluded.set('sharding', new Set(['fsdp=full_shard']));
    expect(points.map((p) => passes(p, excluded))).toEqual([true, false, false]);
    expect(points.every((p) => passes(p, new Map()))).toBe(true);
    expect(DIMENSIONS.map((d) => d.key)).toContain('micro_batch');
  });
});

describe('a point opens its estimate', () => {
  it("is the shared settings with the point's layout over them", () => {
    const space = {
      base_scenario: { model: 'Llama-3.1-8B', gpus: 16, tp: 99 },
    } as unknown as PlanSpace;
    const p = point('x', 10, 5, { tp: 4 });
    expect(pointScenario(space, p)).toEqual({
      model: 'Llama-3.1-8B',
      gpus: 16,
      tp: 4,
      pp: 1,
      micro_batch: 1,
      recompute: 'none',
    });
    expect(pointTitle({ ...p, pareto: true, rank: 2 })).toBe(
      'x: 10.0 GiB, 5 tokens/s per GPU (Pareto front, #2)',
    );
  });
});

describe('niceTicks', () => {
  it('covers the maximum with round steps from zero', () => {
    expect(niceTicks(80)).toEqual([0, 20, 40, 60, 80]);
    expect(niceTicks(93.2)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(3400)).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(niceTicks(0)).toEqual([0, 1]);
  });
});

describe('spaceSummary', () => {
  it('says how thinned the cloud is', () => {
    const space = {
      fitting: 120000,
      shown: 1400,
      thinned: true,
      grid: { memory_cells: 32, speed_cell_octaves: 0.25 },
      pareto: [1, 2, 3],
    } as unknown as PlanSpace;
    expect(spaceSummary(space)).toBe(
      '1,400 of 120,000 fitting layouts drawn: all 3 on the Pareto front, the rest sampled one ' +
        'per cell of a 32-column grid in peak memory and tokens/s.',
    );
  });
});
