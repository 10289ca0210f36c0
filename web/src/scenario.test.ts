import { describe, expect, it } from 'vitest';
import { coerce, resolvedValue, scenarioFromQuery, scenarioToQuery } from './scenario';
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

describe('resolvedValue', () => {
  const resolved = {
    model: { hidden: 4096, moe: { top_k: 2 } },
    training: { optimizer_state_dtype: 'fp32' },
    parallel: { world_size: 8, first_stage_layers: 0 },
    overheads: { cuda_context_bytes: 629145600 },
  };
  it('finds where the core reports each option', () => {
    expect(resolvedValue(resolved, 'hidden_size')).toBe(4096);
    expect(resolvedValue(resolved, 'top_k')).toBe(2);
    expect(resolvedValue(resolved, 'optimizer_dtype')).toBe('fp32');
    expect(resolvedValue(resolved, 'gpus')).toBe(8);
    // 629145600 bytes = 600 MiB = 0.5859375 GiB, shown to four places.
    expect(resolvedValue(resolved, 'cuda_context_gib')).toBe(0.5859);
    expect(resolvedValue(resolved, 'gpu')).toBeUndefined();
    // 0 = even split: the option's default text ("even split") is shown instead.
    expect(resolvedValue(resolved, 'first_stage_layers')).toBeUndefined();
    expect(resolvedValue(null, 'tp')).toBeUndefined();
  });
});
