// The Hugging Face Hub model input: the user types an id and presses Fetch; the server fetches
// it (GET /api/hub/...) and, once it answers, the scenario uses that id and the form shows what
// the Hub holds (commit, parameters, checkpoint, notes). Typing alone changes nothing.

import { TransportError, type ApiResult } from '../api';
import { el, replace } from '../dom';
import { exactBytes, gib, paramCount } from '../format';
import type { ApiError, HubModel, Preset } from '../types';

const HUB_PROMPT = 'type a Hugging Face Hub id, org/name or org/name@revision, and press Fetch';

/** A model value that names a Hub repository rather than a preset (presets win, as in the core). */
export function isHubId(model: string, presets: Preset[]): boolean {
  const lower = model.toLowerCase();
  const preset = presets.some(
    (p) => p.name.toLowerCase() === lower || p.hub_id?.toLowerCase() === lower,
  );
  return !preset && model.includes('/');
}

/** What the Hub holds for an id (GET /api/hub/{org}/{name}[@revision]). */
export type FetchHub = (id: string) => Promise<ApiResult<HubModel>>;

export class HubModelInput {
  /** The block shown while the model source is the Hub. */
  readonly element: HTMLElement;
  /** The id's text input; the form marks it invalid when the core rejects the model. */
  readonly input: HTMLInputElement;
  private readonly button: HTMLButtonElement;
  private readonly info: HTMLElement;
  private readonly pending: HTMLElement;
  /** The Hub id in use (fetched, or from a link); null until one is. */
  private model: string | null = null;
  /** Why the last fetch failed; shown beside the Hub field until the next fetch. */
  private error: ApiError | null = null;
  /** Numbers the fetches, so that only the newest one's answer is shown. */
  private request = 0;

  constructor(
    private readonly fetchHub: FetchHub,
    private readonly onChange: () => void,
  ) {
    this.input = el('input', {
      type: 'text',
      id: 'f-hub-model',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'org/name or org/name@revision',
      'aria-describedby': 'f-model-error f-hub-help',
      oninput: () => this.showPending(),
      onkeydown: (e: Event) => {
        if ((e as KeyboardEvent).key !== 'Enter') return;
        e.preventDefault();
        void this.fetch();
      },
    });
    this.button = el(
      'button',
      { type: 'button', id: 'f-hub-fetch', onclick: () => void this.fetch() },
      'Fetch',
    );
    this.info = el('div', { id: 'hub-info', class: 'hub-info', 'aria-live': 'polite' });
    this.pending = el('p', { id: 'hub-pending', class: 'hint', hidden: true });
    this.element = el(
      'div',
      { class: 'field wide', 'data-source': 'hub' },
      el('label', { for: 'f-hub-model' }, 'Fetch from the Hub'),
      el('div', { class: 'control-row' }, this.input, this.button),
      el(
        'small',
        { id: 'f-hub-help', class: 'help' },
        'The server downloads the repository’s config.json (and reads its safetensors headers) ' +
          'and the scenario uses that id; gated models need a server started with --hub-token.',
      ),
      this.pending,
      this.info,
    );
  }

  /** The id the scenario uses, or why there is none yet. */
  chosen(): { model: string; error: null } | { model: null; error: ApiError } {
    if (this.model !== null) return { model: this.model, error: null };
    return { model: null, error: this.error ?? hubPrompt(this.input.value) };
  }

  /** An id from a shared link: used as is (the estimate fetches it); its details are fetched too. */
  useFromLink(id: string): void {
    this.model = id;
    this.input.value = id;
    this.error = null;
    void this.describe(id);
  }

  /** Typing a new id does not change the scenario until Fetch: say so. */
  private showPending(): void {
    const typed = this.input.value.trim();
    // Not after a failed fetch of the same id: its error is shown instead.
    const pending = typed !== '' && typed !== this.model && typed !== this.error?.value;
    this.pending.hidden = !pending;
    this.pending.textContent = pending
      ? `Press Fetch (or Enter) to use ${typed}` +
        (this.model ? `; the results are for ${this.model}.` : '.')
      : '';
  }

  /** Fetch pressed: ask the server for the id; on success the scenario uses it. */
  private async fetch(): Promise<void> {
    const id = this.input.value.trim();
    if (id === '') {
      this.model = null;
      this.error = hubPrompt(id);
      this.onChange();
      return;
    }
    const result = await this.describe(id);
    if (result === 'stale') return;
    this.model = result === 'ok' ? id : null;
    this.showPending();
    this.onChange();
  }

  /**
   * Shows what the Hub holds for `id` (commit, parameters, checkpoint notes). Sets the error on
   * failure; 'stale' when a newer fetch started meanwhile.
   */
  private async describe(id: string): Promise<'ok' | 'failed' | 'stale'> {
    const mine = ++this.request;
    this.button.disabled = true;
    replace(this.info, el('p', { class: 'status' }, `Fetching ${id} from the Hub…`));
    let result: ApiResult<HubModel>;
    try {
      result = await this.fetchHub(id);
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      result = {
        ok: false,
        error: {
          field: 'model',
          value: id,
          accepted: '',
          reason: error.message,
          message: `model = ${id}: ${error.message}`,
        },
      };
    }
    if (mine !== this.request) return 'stale';
    this.button.disabled = false;
    if (!result.ok) {
      this.error = result.error;
      replace(this.info);
      return 'failed';
    }
    this.error = null;
    replace(this.info, hubSummary(result.value));
    return 'ok';
  }
}

function hubPrompt(typed: string): ApiError {
  return {
    field: 'model',
    value: typed,
    accepted: 'org/name or org/name@revision',
    reason: HUB_PROMPT,
    message: `Hub model: ${HUB_PROMPT}`,
  };
}

/** The fetched model at a glance: id, commit, parameters, checkpoint and the notes. */
function hubSummary(model: HubModel): HTMLElement {
  const checkpoint = model.checkpoint;
  const stored =
    checkpoint?.available && checkpoint.total_bytes !== undefined
      ? el(
          'li',
          {},
          'Checkpoint: ',
          el(
            'span',
            { title: exactBytes(checkpoint.total_bytes) },
            storedSize(checkpoint.total_bytes),
          ),
          checkpoint.dtypes
            ? ` as ${Object.entries(checkpoint.dtypes)
                .map(([dtype, n]) => `${dtype} ${paramCount(n)}`)
                .join(', ')}`
            : '',
        )
      : null;
  return el(
    'div',
    { class: 'hub-summary' },
    el(
      'p',
      {},
      el('strong', {}, model.model),
      ' at commit ',
      el('code', { id: 'hub-commit', title: model.commit }, model.commit.slice(0, 12)),
    ),
    el(
      'ul',
      {},
      model.parameters
        ? el('li', {}, `Parameters (vramplan): ${paramCount(model.parameters.total)}`)
        : null,
      stored,
      model.model_error ? el('li', { class: 'field-error' }, model.model_error.message) : null,
      model.notes.map((note) => el('li', { class: 'hub-note' }, note)),
    ),
  );
}

/** GiB for real checkpoints, MiB for small ones (tiny test models would read 0.00 GiB). */
export function storedSize(bytes: number): string {
  return bytes >= 2 ** 30 ? gib(bytes) : `${(bytes / 2 ** 20).toFixed(2)} MiB`;
}
