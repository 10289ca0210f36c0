import { describe, expect, it } from 'vitest';
import { hubPath } from './api';

describe('Hub paths', () => {
  it('keep their slashes in the API path, each part encoded', () => {
    expect(hubPath('tiny-org/tiny-llama')).toBe('/api/hub/tiny-org/tiny-llama');
    expect(hubPath('org/name@refs/pr/1')).toBe('/api/hub/org/name%40refs/pr/1');
    expect(hubPath('org/a b')).toBe('/api/hub/org/a%20b');
  });
});
