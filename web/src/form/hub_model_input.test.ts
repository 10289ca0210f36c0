import { describe, expect, it } from 'vitest';
import type { Preset } from '../types';
import { isHubId, storedSize } from './hub_model_input';

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
});

describe('checkpoint size', () => {
  it('is in GiB from 1 GiB up and in MiB below, so tiny test models do not read 0', () => {
    expect(storedSize(2 ** 30)).toBe('1.00 GiB');
    expect(storedSize(3 * 2 ** 20)).toBe('3.00 MiB');
    expect(storedSize(2 ** 30 - 2 ** 20)).toBe('1023.00 MiB');
  });
});
