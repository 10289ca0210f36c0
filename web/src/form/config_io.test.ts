import { describe, expect, it } from 'vitest';
import { formatsOf } from '../api';
import {
  configExtension,
  configFileName,
  emitBody,
  importBody,
  importSummary,
  loadPaste,
  savePaste,
  splitImported,
  type ImportedConfig,
} from './config_io';

const IMPORTED: ImportedConfig = {
  format: 'megatron',
  settings: { gpus: 16, tp: 2, pp: 2, model_config: { model_type: 'megatron_gpt' } },
  understood: [
    { key: '--tensor-model-parallel-size', value: '2', setting: 'tp = 2' },
    { key: '--pipeline-model-parallel-size', value: '2', setting: 'pp = 2' },
  ],
  ignored: [{ key: '--lr', value: '3.0e-4', reason: 'no effect on memory' }],
  warnings: [],
};

describe('request bodies', () => {
  it('read a paste alone, naming the format only when one is chosen', () => {
    expect(importBody('vllm serve x', '')).toEqual({ from: 'vllm serve x' });
    expect(importBody('a: 1', 'megatron-yaml')).toEqual({
      from: 'a: 1',
      from_format: 'megatron-yaml',
    });
  });

  it('write the settings as a format', () => {
    expect(emitBody({ model: 'Llama-3.1-8B', tp: 2 }, 'megatron')).toEqual({
      model: 'Llama-3.1-8B',
      tp: 2,
      emit: 'megatron',
    });
  });
});

describe('an import in a form', () => {
  it('fills the inputs the form has and lists the others', () => {
    const { shown, unshown } = splitImported(
      { ...IMPORTED.settings, cuda_graphs: true, from: 'x', nothing: null },
      new Set(['gpus', 'tp', 'pp']),
    );
    expect(shown).toEqual({ gpus: 16, tp: 2, pp: 2, model_config: { model_type: 'megatron_gpt' } });
    expect(unshown).toEqual([['cuda_graphs', true]]);
  });

  it('is summed up in one line', () => {
    expect(importSummary(IMPORTED)).toBe('Read as megatron: 2 keys understood, 1 ignored.');
    expect(
      importSummary({ ...IMPORTED, understood: IMPORTED.understood.slice(1), warnings: ['w'] }),
    ).toBe('Read as megatron: 1 key understood, 1 ignored, 1 warning.');
  });
});

describe('formats from the server', () => {
  it('come from the options answer, or none from a server that lists none', () => {
    const megatron = { name: 'megatron', what: 'a launch script' };
    expect(formatsOf({ options: [], formats: { from: [megatron], emit: [megatron] } })).toEqual({
      from: [megatron],
      emit: [megatron],
    });
    expect(formatsOf({ options: [] })).toEqual({ from: [], emit: [] });
    expect(formatsOf([])).toEqual({ from: [], emit: [] });
  });
});

describe('written configs', () => {
  it('get the extension their text says', () => {
    expect(configExtension('#!/bin/bash\ntorchrun pretrain_gpt.py --tp 2\n')).toBe('sh');
    expect(configExtension('# vramplan: --gpu h200\nvllm serve Qwen/Qwen3-8B -tp 2\n')).toBe('sh');
    expect(configExtension('python3 -m sglang.launch_server \\\n  --tp-size 2\n')).toBe('sh');
    expect(configExtension('{"train_micro_batch_size_per_gpu": 1}')).toBe('json');
    expect(configExtension('[job]\ndump_folder = "./out"\n[parallelism]\ntp = 2\n')).toBe('toml');
    expect(configExtension('model:\n  tensor_model_parallel_size: 2\nseed: 1\n')).toBe('yaml');
    expect(configExtension('something else')).toBe('txt');
  });

  it('are named by format and model', () => {
    expect(configFileName('megatron', 'Llama-3.1-8B', '#!/bin/bash\n')).toBe(
      'vramplan-megatron-Llama-3.1-8B.sh',
    );
    expect(configFileName('vllm', 'Qwen/Qwen3-8B', 'vllm serve x')).toBe(
      'vramplan-vllm-Qwen_Qwen3-8B.sh',
    );
    expect(configFileName('megatron', undefined, '{}')).toBe('vramplan-megatron-config.json');
  });
});

/** A Storage stand-in: a map, or one whose writes fail (a full quota). */
function memoryStorage(failing = false) {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => {
      if (failing) throw new Error('QuotaExceededError');
      items.set(key, value);
    },
    removeItem: (key: string) => void items.delete(key),
  };
}

describe('the paste of a session', () => {
  it('is kept per view and forgotten when emptied', () => {
    const storage = memoryStorage();
    savePaste(storage, 'training', { text: 'torchrun x', format: 'megatron' });
    expect(loadPaste(storage, 'training')).toEqual({ text: 'torchrun x', format: 'megatron' });
    expect(loadPaste(storage, 'plan')).toEqual({ text: '', format: '' });
    savePaste(storage, 'training', { text: '  ', format: '' });
    expect(storage.items.size).toBe(0);
  });

  it('survives a storage that refuses or holds garbage', () => {
    savePaste(memoryStorage(true), 'training', { text: 'x', format: '' });
    const garbled = memoryStorage();
    garbled.items.set('vramplan.paste.training', '{not json');
    expect(loadPaste(garbled, 'training')).toEqual({ text: '', format: '' });
    expect(loadPaste(null, 'training')).toEqual({ text: '', format: '' });
  });
});
