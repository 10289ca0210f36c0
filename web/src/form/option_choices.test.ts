import { describe, expect, it } from 'vitest';
import type { Gpu, OptionSpec } from '../types';
import { selectChoices, usesSelect } from './option_choices';

const option = (key: string, kind: OptionSpec['kind'], choices: string[] = []): OptionSpec => ({
  key,
  kind,
  group: 'g',
  default: '',
  help: '',
  choices,
});
const GPUS: Gpu[] = [{ id: 'h100-80gb', name: 'H100 80GB', usable_bytes: 79.1 * 2 ** 30 }];

describe('select choices', () => {
  it("are the option's choices, with a linked value they lack kept at the end", () => {
    const recompute = option('recompute', 'choice', ['none', 'selective', 'full']);
    expect(selectChoices(recompute, GPUS, undefined)).toEqual([
      ['none', 'none'],
      ['selective', 'selective'],
      ['full', 'full'],
    ]);
    expect(selectChoices(recompute, GPUS, 'full')).toHaveLength(3);
    expect(selectChoices(recompute, GPUS, 'weird').at(-1)).toEqual(['weird', 'weird']);
  });

  it('are the GPU catalog for the GPU, named with its usable memory', () => {
    const gpu = option('gpu', 'text');
    expect(selectChoices(gpu, GPUS, undefined)).toEqual([['h100-80gb', 'H100 80GB (79.10 GiB)']]);
    expect(selectChoices(gpu, GPUS, 'b200').at(-1)).toEqual(['b200', 'b200']);
    expect(usesSelect(gpu)).toBe(true);
    expect(usesSelect(option('tp', 'integer'))).toBe(false);
    expect(usesSelect(option('engine', 'choice'))).toBe(true);
  });
});
