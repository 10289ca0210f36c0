import { describe, expect, it } from 'vitest';
import { hubPath } from './api';
import { isHubId } from './form';
import type { OptionSpec, Preset } from './types';
import { INFERENCE_LAYOUT, resolvedInferenceValue } from './views/inference/labels';
import { TRAINING_LAYOUT } from './views/training/labels';

const PRESETS: Preset[] = [
  { name: 'Llama-3.1-8B', hub_id: 'meta-llama/Llama-3.1-8B' },
  { name: 'gpt2', hub_id: 'openai-community/gpt2' },
];

describe('Hub ids', () => {
  it('are org/name values that no preset claims', () => {
    expect(isHubId('tiny-org/tiny-llama', PRESETS)).toBe(true);
    expect(isHubId('tiny-org/tiny-llama@v1.0', PRESETS)).toBe(true);
    // A preset's Hub id is the preset, as in the core (no network).
    expect(isHubId('meta-llama/Llama-3.1-8B', PRESETS)).toBe(false);
    expect(isHubId('META-LLAMA/llama-3.1-8b', PRESETS)).toBe(false);
    expect(isHubId('Llama-3.1-8B', PRESETS)).toBe(false);
    expect(isHubId('No-Such-Model', PRESETS)).toBe(false);
  });

  it('keep their slashes in the API path, each part encoded', () => {
    expect(hubPath('tiny-org/tiny-llama')).toBe('/api/hub/tiny-org/tiny-llama');
    expect(hubPath('org/name@refs/pr/1')).toBe('/api/hub/org/name%40refs/pr/1');
    expect(hubPath('org/a b')).toBe('/api/hub/org/a%20b');
  });
});

const option = (key: string, group: string): OptionSpec => ({
  key,
  group,
  kind: 'text',
  default: '',
  help: '',
  choices: [],
});

describe('serving form layout', () => {
  it('groups context and batch, formats, and the engine as people tune a deployment', () => {
    const section = (key: string, group: string) => INFERENCE_LAYOUT.groupOf(option(key, group));
    expect(section('context', 'serving')).toBe('workload');
    expect(section('batch', 'serving')).toBe('workload');
    expect(section('kv_dtype', 'serving')).toBe('formats');
    expect(section('attention_dtype', 'weights')).toBe('formats');
    expect(section('block_size', 'serving')).toBe('engine');
    expect(section('gpu_memory_utilization', 'engine')).toBe('engine');
    expect(section('tp', 'parallelism')).toBe('parallelism');
    expect(INFERENCE_LAYOUT.subgroups.formats.of.mlp_dtype).toBe('Per module class');
    expect(INFERENCE_LAYOUT.labelFor('hidden_size')).toBe('Hidden size'); // the training label
    expect(TRAINING_LAYOUT.groupOf(option('framework', 'framework'))).toBe('framework');
  });

  it('reads the values the core used from the serving answer', () => {
    const resolved = {
      tp: 2,
      context: 8192,
      gpu_memory_utilization: null,
      weights: { attention: { format: 'fp8', bits_per_weight: 8.0 } },
      overheads: { cuda_graph_bytes: 536870912 },
    };
    expect(resolvedInferenceValue(resolved, 'tp')).toBe(2);
    expect(resolvedInferenceValue(resolved, 'context')).toBe(8192);
    expect(resolvedInferenceValue(resolved, 'gpu_memory_utilization')).toBeUndefined();
    expect(resolvedInferenceValue(resolved, 'attention_dtype')).toBe('fp8');
    expect(resolvedInferenceValue(resolved, 'cuda_graph_gib')).toBe(0.5);
    expect(resolvedInferenceValue(resolved, 'hidden_size')).toBeUndefined();
  });
});
