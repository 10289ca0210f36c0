import { describe, expect, it } from 'vitest';
import { normaliseSweep, parseSweepValues } from './sweep_data';

describe('parseSweepValues', () => {
  it('reads whole numbers, k as 1024', () => {
    expect(parseSweepValues('1024, 2k 4096;8k')).toEqual({ values: [1024, 2048, 4096, 8192] });
  });

  it('names the first bad entry', () => {
    expect(parseSweepValues('1024, -5')).toEqual({ error: '"-5" is not a positive whole number' });
    expect(parseSweepValues('0')).toEqual({ error: '"0" is not a positive whole number' });
    expect(parseSweepValues('  ')).toHaveProperty('error');
    expect(parseSweepValues(Array(40).fill('1').join(','))).toEqual({
      error: 'at most 32 values (got 40)',
    });
  });
});

describe('normaliseSweep', () => {
  const peak = { allocated_bytes: 1, reserved_bytes: 2, device_bytes: 3 };
  const error = { field: 'tp', value: '3', accepted: '1, 2', reason: '', message: '--tp = 3: no' };

  it('reads points with a peak or an error', () => {
    const body = {
      points: [
        { value: 1, peak, fit: [{ verdict: 'fits' }] },
        { value: 3, error },
      ],
    };
    expect(normaliseSweep(body, 'tp')).toEqual([
      { value: 1, peak, verdict: 'fits' },
      { value: 3, error },
    ]);
  });

  it('accepts a bare list keyed by the varied input', () => {
    expect(normaliseSweep([{ tp: 2, ...peak, verdict: 'oom' }], 'tp')).toEqual([
      { value: 2, peak: { tp: 2, ...peak, verdict: 'oom' }, verdict: 'oom' },
    ]);
  });

  it('rejects an answer without points', () => {
    expect(() => normaliseSweep({ nothing: true }, 'tp')).toThrow('no list of points');
  });
});
