import { describe, expect, it } from 'vitest';
import { resolvedValue } from './resolved';

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
