import { describe, expect, it } from 'vitest';
import { isModelError, parseModelConfig, presetName } from './model_source';

describe('config.json text', () => {
  it('is sent as the object it holds', () => {
    expect(parseModelConfig('{"hidden_size": 64}')).toEqual({ config: { hidden_size: 64 } });
  });

  it('is refused when empty, not JSON, or not an object, naming model_config', () => {
    for (const text of ['', '  ', '{bad', '[1, 2]', 'null', '42']) {
      const parsed = parseModelConfig(text);
      expect('error' in parsed, text).toBe(true);
      if (!('error' in parsed)) continue;
      expect(parsed.error.field).toBe('model_config');
      expect(parsed.error.message).toMatch(/^config\.json: /);
    }
    const empty = parseModelConfig(' ');
    expect('error' in empty && empty.error.reason).toBe('paste or upload a config.json');
  });
});

describe('model errors', () => {
  it('are those about the model or its config, not about one option', () => {
    for (const field of ['model', 'model_config', 'config.hidden_size', 'moe.top_k', 'hidden'])
      expect(isModelError(field), field).toBe(true);
    for (const field of ['tp', 'seq_len', 'hidden_size', 'vocab_size', ''])
      expect(isModelError(field), field).toBe(false);
  });
});

describe('a preset named by its Hub id', () => {
  it('is shown by its preset name; other names stay as given', () => {
    const presets = [{ name: 'Llama-3.1-8B', hub_id: 'meta-llama/Llama-3.1-8B' }];
    expect(presetName('meta-llama/llama-3.1-8b', presets)).toBe('Llama-3.1-8B');
    expect(presetName('Llama-3.1-8B', presets)).toBe('Llama-3.1-8B');
    expect(presetName('Typo-7B', presets)).toBe('Typo-7B');
  });
});
