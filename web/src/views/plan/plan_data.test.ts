import { describe, expect, it } from 'vitest';
import {
  mfuText,
  peakText,
  planSettings,
  searchStatsText,
  stepText,
  tokensText,
  type PlanAnswer,
} from './plan_data';

describe('planSettings', () => {
  it('types clean numbers, leaves empty inputs out and passes bad text on for the core', () => {
    expect(
      planSettings({
        model: 'Llama-3.1-8B',
        gpus: '16',
        seq_len: ' 4096 ',
        headroom: '0.15',
        tp: '',
        zero: '1',
        sequence_parallel: 'true',
        recompute: 'selective',
        global_batch: 'lots',
      }),
    ).toEqual({
      model: 'Llama-3.1-8B',
      gpus: 16,
      seq_len: 4096,
      headroom: 0.15,
      zero: 1,
      sequence_parallel: true,
      recompute: 'selective',
      global_batch: 'lots',
    });
  });

  it('ignores keys that are not plan inputs', () => {
    expect(planSettings({ view: 'plan', gpus: '8' })).toEqual({ gpus: 8 });
  });
});

describe('candidate numbers', () => {
  it('are written as the CLI writes them', () => {
    expect(tokensText(12345.6)).toBe('12,346');
    expect(peakText(64 * 1024 ** 3, 71.5 * 1024 ** 3)).toBe('64.0 / 71.5 GiB');
    expect(stepText(1.23456)).toBe('1.235 s');
    expect(mfuText(0.4321)).toBe('43.2%');
  });
});

describe('searchStatsText', () => {
  it('counts layouts with thousands separators and gives the seconds to the millisecond', () => {
    const answer = {
      evaluated: 12345,
      stats: { evaluated: 12345, fitting: 1024, pruned: 0, seconds: 0.0416, threads: 2 },
    } as PlanAnswer;
    expect(searchStatsText(answer)).toBe(
      '12,345 layouts evaluated in 0.042 s on 2 thread(s); 1,024 fit.',
    );
  });
});
