import { describe, expect, it } from 'vitest';
import type { OptionSpec } from '../../types';
import { TRAINING_LAYOUT } from '../training/labels';
import { INFERENCE_LAYOUT } from './labels';

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
    expect(section('cpu_offload_gib', 'offload')).toBe('offload');
    expect(INFERENCE_LAYOUT.groupTitle('offload')).toBe('Offload and host memory');
    expect(INFERENCE_LAYOUT.subgroups.formats.of.mlp_dtype).toBe('Per module class');
    expect(INFERENCE_LAYOUT.labelFor('hidden_size')).toBe('Hidden size'); // the training label
    expect(TRAINING_LAYOUT.groupOf(option('framework', 'framework'))).toBe('framework');
  });
});
