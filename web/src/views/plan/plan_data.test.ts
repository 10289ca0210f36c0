import { describe, expect, it } from 'vitest';
import {
  PASTED_MODEL,
  configModelText,
  missingRequired,
  planEmitBody,
  mfuText,
  planFromSettings,
  planRequest,
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

describe('a pasted config in the plan form', () => {
  const settings = {
    model_config: { model_type: 'megatron_gpt', num_hidden_layers: 32, hidden_size: 4096 },
    gpus: 16,
    seq_len: 8192,
    global_batch: 128,
    tp: 2,
    pp: 2,
    sequence_parallel: true,
    distributed_optimizer: true,
    param_dtype: 'bf16',
  };

  it('leaves the layout to the search and keeps what has no input as extras', () => {
    const { fields, extras } = planFromSettings(settings, false);
    expect(fields).toEqual({
      model: PASTED_MODEL,
      gpus: '16',
      seq_len: '8192',
      global_batch: '128',
    });
    expect(extras).toEqual({ model_config: settings.model_config, param_dtype: 'bf16' });
  });

  it('keeps a shared link whole: its fixed dimensions are the user’s', () => {
    const { fields, extras } = planFromSettings({ model: 'Llama-3.1-8B', tp: 2, vpp: 2 }, true);
    expect(fields).toEqual({ model: 'Llama-3.1-8B', tp: '2' });
    expect(extras).toEqual({ vpp: 2 });
  });

  it('sends the config model only while it is selected', () => {
    const extras = { model_config: settings.model_config, param_dtype: 'bf16' };
    expect(planRequest({ model: PASTED_MODEL, gpus: '16', global_batch: '128' }, extras)).toEqual({
      model_config: settings.model_config,
      param_dtype: 'bf16',
      gpus: 16,
      global_batch: 128,
    });
    expect(planRequest({ model: 'Qwen3-8B', gpus: '16' }, extras)).toEqual({
      model: 'Qwen3-8B',
      param_dtype: 'bf16',
      gpus: 16,
    });
  });

  it('names the config model by its shape', () => {
    expect(configModelText(settings.model_config)).toBe('megatron_gpt, 32 layers, hidden 4096');
    expect(configModelText({ model_type: 'megatron_gpt', num_layers: 80 })).toBe(
      'megatron_gpt, 80 layers',
    );
    expect(configModelText(null)).toBe('config');
  });

  it('says which required setting the config lacked', () => {
    expect(missingRequired({ field: 'gpus', value: '' })).toBe('gpus');
    expect(missingRequired({ field: 'global_batch', value: '' })).toBe('global_batch');
    expect(missingRequired({ field: 'gpus', value: '0' })).toBeNull();
    expect(missingRequired({ field: '--tensor-model-parallel-size', value: '' })).toBeNull();
  });
});

describe('copying the winner', () => {
  it('looks through at least the top 100 for a layout the format can write', () => {
    expect(planEmitBody({ model: 'Llama-3.1-8B', gpus: 16, top: 5 }, 'megatron')).toEqual({
      model: 'Llama-3.1-8B',
      gpus: 16,
      top: 100,
      emit: 'megatron',
    });
    expect(planEmitBody({ top: 200 }, 'megatron').top).toBe(200);
    expect(planEmitBody({}, 'megatron').top).toBe(100);
  });
});
