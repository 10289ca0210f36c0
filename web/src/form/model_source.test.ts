import { describe, expect, it } from 'vitest';
import { isModelError, parseModelConfig } from './model_source';

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
