import { describe, expect, it } from 'vitest';
import { resolvedInferenceValue } from './resolved';

describe('resolvedInferenceValue', () => {
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
