// Keeps displayed results in step with the inputs: requests are debounced while the user types,
// and a response is used only if no newer request started after it (older ones are aborted).

export type Outcome<T> = { current: true; value: T } | { current: false };

/** Runs one request at a time in spirit: starting a new one aborts and outdates the previous. */
export class LatestOnly<T> {
  private sequence = 0;
  private controller: AbortController | null = null;

  /** The number of the most recent request; a response from an older one is stale. */
  get latest(): number {
    return this.sequence;
  }

  async run(request: (signal: AbortSignal) => Promise<T>): Promise<Outcome<T>> {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const mine = ++this.sequence;
    try {
      const value = await request(controller.signal);
      return mine === this.sequence ? { current: true, value } : { current: false };
    } catch (error) {
      if (mine !== this.sequence || controller.signal.aborted) return { current: false };
      throw error;
    }
  }

  /** Outdates whatever is in flight without starting anything (e.g. the inputs became invalid). */
  cancel(): void {
    this.controller?.abort();
    this.controller = null;
    ++this.sequence;
  }
}

/** Calls `fn` once the calls stop for `waitMs`; `flush` runs a pending call now. */
export function debounce(fn: () => void, waitMs: number) {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const call = () => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, waitMs);
  };
  call.flush = () => {
    if (timer === null) return;
    clearTimeout(timer);
    timer = null;
    fn();
  };
  call.pending = () => timer !== null;
  return call;
}
