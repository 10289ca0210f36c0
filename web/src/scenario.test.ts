import { describe, expect, it } from 'vitest';
import { coerce, scenarioFromQuery, scenarioToQuery } from './scenario';
import type { OptionSpec } from './types';

const option = (key: string, kind: OptionSpec['kind']): OptionSpec => ({
  key,
  kind,
  group: 'g',
  default: '',
  help: '',
  choices: [],
});
const OPTIONS = [
  option('model', 'text'),
  option('model_config', 'object'),
  option('tp', 'integer'),
  option('seq_len', 'integer'),
  option('allocator_overhead', 'number'),
  option('distributed_optimizer', 'bool'),
  option('recompute', 'choice'),
];

describe('coerce', () => {
  it('types clean integers, numbers and booleans', () => {
    expect(coerce('integer', '8192')).toBe(8192);
    expect(coerce('integer', ' -1 ')).toBe(-1);
    expect(coerce('number', '0.25')).toBe(0.25);
    expect(coerce('number', '1e-3')).toBe(0.001);
    expect(coerce('bool', 'true')).toBe(true);
    expect(coerce('bool', 'false')).toBe(false);
  });

  it('passes anything else on as typed, for the core to judge', () => {
    expect(coerce('integer', '4k')).toBe('4k');
    expect(coerce('integer', '1.5')).toBe('1.5');
    // Beyond 2^53 a JSON number would be rounded; the text keeps the user's digits.
    expect(coerce('integer', '99999999999999999999')).toBe('99999999999999999999');
    expect(coerce('number', 'abc')).toBe('abc');
    expect(coerce('bool', 'maybe')).toBe('maybe');
    expect(coerce('choice', 'selective')).toBe('selective');
  });

  it('parses objects given as JSON text', () => {
    expect(coerce('object', '{"hidden_size": 64}')).toEqual({ hidden_size: 64 });
    expect(coerce('object', '{broken')).toBe('{broken');
  });
});

describe('URL round trip', () => {
  it('restores the same scenario and view', () => {
    const scenario = {
      model: 'Llama-3.1-8B',
      tp: 2,
      seq_len: 8192,
      allocator_overhead: 0.2,
      distributed_optimizer: true,
      recompute: 'selective',
    };
    const query = scenarioToQuery(scenario, 'training');
    expect(query).toBe(
      '?view=training&model=Llama-3.1-8B&tp=2&seq_len=8192&allocator_overhead=0.2&distributed_optimizer=true&recompute=selective',
    );
    expect(scenarioFromQuery(query, OPTIONS)).toEqual({ scenario, view: 'training' });
  });

  it('keeps an inline config.json', () => {
    const scenario = {
      model_config: { model_type: 'llama', hidden_size: 64, num_hidden_layers: 2 },
    };
    const back = scenarioFromQuery(scenarioToQuery(scenario, 'training'), OPTIONS);
    expect(back.scenario).toEqual(scenario);
  });

  it('passes unknown keys on so the API can name them', () => {
    expect(scenarioFromQuery('?bogus=1&tp=x', OPTIONS).scenario).toEqual({ bogus: '1', tp: 'x' });
  });
});
