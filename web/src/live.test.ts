import { afterEach, describe, expect, it, vi } from 'vitest';
import { LatestOnly, debounce } from './live';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('LatestOnly', () => {
  it('uses only the newest answer, even when an older one arrives last', async () => {
    const latest = new LatestOnly<string>();
    const slow = deferred<string>();
    const fast = deferred<string>();
    const signals: AbortSignal[] = [];
    const first = latest.run((signal) => (signals.push(signal), slow.promise));
    const second = latest.run((signal) => (signals.push(signal), fast.promise));
    expect(signals[0].aborted).toBe(true);
    fast.resolve('new');
    slow.resolve('old');
    expect(await second).toEqual({ current: true, value: 'new' });
    expect(await first).toEqual({ current: false });
  });

  it('treats a rejection of an outdated request as stale, of the current one as an error', async () => {
    const latest = new LatestOnly<string>();
    const outdated = latest.run(() => Promise.reject(new Error('aborted')));
    latest.cancel();
    expect(await outdated).toEqual({ current: false });
    await expect(latest.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });
});

describe('debounce', () => {
  afterEach(() => vi.useRealTimers());

  it('calls once after the calls stop', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const call = debounce(fn, 150);
    call();
    vi.advanceTimersByTime(100);
    call();
    vi.advanceTimersByTime(100);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(60);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('flush runs a pending call at once, and only then', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const call = debounce(fn, 150);
    call.flush();
    expect(fn).not.toHaveBeenCalled();
    call();
    expect(call.pending()).toBe(true);
    call.flush();
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(200);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});
