// A scenario form built from an option list (GET /api/options for training, /api/infer/options
// for serving) so that every CLI input appears. It keeps only what the user set; unset inputs
// show the value the core resolved as a placeholder. The model comes from a preset, the Hugging
// Face Hub (fetched through the server), a config.json, or the architecture fields alone.

import { TransportError, type ApiResult } from './api';
import { el, replace } from './dom';
import { exactBytes, gib, paramCount } from './format';
import { coerce, toText } from './scenario';
import type { ApiError, Gpu, HubModel, OptionSpec, Preset, Scenario } from './types';

export type ModelSource = 'preset' | 'hub' | 'config' | 'custom';

/** How a view names, groups and orders its inputs. */
export interface FormLayout {
  /** Accessible name of the form, e.g. "Training scenario". */
  ariaLabel: string;
  /** Order of the sections; groups not listed follow in the order the options give. */
  groupOrder: string[];
  /** The section an option is shown in (by default the API's group). */
  groupOf: (option: OptionSpec) => string;
  groupTitle: (group: string) => string;
  labelFor: (key: string) => string;
  /** Sections whose fields are split under sub-headings: group -> key -> sub-heading, in order. */
  subgroups: Record<string, { of: Record<string, string>; order: string[] }>;
  /** Sections that start folded: rarely changed, and long on a phone. */
  folded: Set<string>;
  /** The value the core used for an option, read from the answer's resolved scenario. */
  resolved: (resolved: unknown, key: string) => unknown;
}

export interface FormContext {
  options: OptionSpec[];
  presets: Preset[];
  gpus: Gpu[];
  layout: FormLayout;
  /** The config.json of a preset (GET /api/models/{name}). */
  loadPresetConfig: (name: string) => Promise<unknown>;
  /** What the Hub holds for an id (GET /api/hub/{org}/{name}[@revision]). */
  fetchHub: (id: string) => Promise<ApiResult<HubModel>>;
}

/** What the form holds now: the scenario to send, or why it cannot be sent yet. */
export type FormState = { scenario: Scenario; localError: ApiError | null };

const MODEL_KEYS = new Set(['model', 'model_config']);
const DEFAULT_PRESET = 'Llama-3.1-8B';
const HUB_PROMPT = 'type a Hugging Face Hub id, org/name or org/name@revision, and press Fetch';

/** A model value that names a Hub repository rather than a preset (presets win, as in the core). */
export function isHubId(model: string, presets: Preset[]): boolean {
  const lower = model.toLowerCase();
  const preset = presets.some(
    (p) => p.name.toLowerCase() === lower || p.hub_id?.toLowerCase() === lower,
  );
  return !preset && model.includes('/');
}

interface Field {
  option: OptionSpec;
  control: HTMLInputElement | HTMLSelectElement;
  reset: HTMLButtonElement;
  error: HTMLElement;
  group: HTMLDetailsElement;
}

export class ScenarioForm {
  readonly element: HTMLFormElement;
  private readonly fields = new Map<string, Field>();
  /** The text of every option the user set (booleans as "true"/"false"). */
  private readonly values = new Map<string, string>();
  private source: ModelSource = 'preset';
  private presetName = DEFAULT_PRESET;
  private configText = '';
  private resolved: unknown = null;
  /** The Hub id in use (fetched, or from a link); null until one is. */
  private hubModel: string | null = null;
  /** Why the last fetch failed; shown beside the Hub field until the next fetch. */
  private hubError: ApiError | null = null;
  private hubRequest = 0;

  private readonly presetSelect: HTMLSelectElement;
  private readonly hubInput: HTMLInputElement;
  private readonly hubButton: HTMLButtonElement;
  private readonly hubInfo: HTMLElement;
  private readonly hubPending: HTMLElement;
  private readonly configArea: HTMLTextAreaElement;
  private readonly modelError: HTMLElement;
  private readonly formError: HTMLElement;
  private readonly modelGroup: HTMLDetailsElement;
  private readonly sourceRadios = new Map<ModelSource, HTMLInputElement>();

  constructor(
    private readonly context: FormContext,
    private readonly onChange: () => void,
  ) {
    this.presetSelect = this.buildPresetSelect();
    this.hubInput = el('input', {
      type: 'text',
      id: 'f-hub-model',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'org/name or org/name@revision',
      'aria-describedby': 'f-model-error f-hub-help',
      oninput: () => this.showHubPending(),
      onkeydown: (e: Event) => {
        if ((e as KeyboardEvent).key !== 'Enter') return;
        e.preventDefault();
        void this.fetchHub();
      },
    });
    this.hubButton = el(
      'button',
      { type: 'button', id: 'f-hub-fetch', onclick: () => void this.fetchHub() },
      'Fetch',
    );
    this.hubInfo = el('div', { id: 'hub-info', class: 'hub-info', 'aria-live': 'polite' });
    this.hubPending = el('p', { id: 'hub-pending', class: 'hint', hidden: true });
    this.configArea = el('textarea', {
      id: 'f-model_config',
      rows: 8,
      spellcheck: 'false',
      'aria-describedby': 'f-model-error f-model_config-help',
      placeholder: '{"model_type": "llama", "hidden_size": 4096, ...}',
    });
    this.modelError = el('p', { id: 'f-model-error', class: 'field-error', hidden: true });
    this.formError = el('p', { id: 'form-error', class: 'field-error form-error', hidden: true });
    this.element = el('form', {
      class: 'scenario-form',
      'aria-label': context.layout.ariaLabel,
      novalidate: true,
      onsubmit: (e: Event) => e.preventDefault(),
    });
    this.modelGroup = this.buildGroups();
  }

  // ---------------------------------------------------------------------------------------------
  // State in and out

  /** The scenario to send: the model (preset, config.json or none) and every option set. */
  state(): FormState {
    const scenario: Scenario = {};
    let localError: ApiError | null = null;
    if (this.source === 'preset') scenario.model = this.presetName;
    if (this.source === 'hub') {
      if (this.hubModel !== null) scenario.model = this.hubModel;
      else localError = this.hubError ?? hubPrompt(this.hubInput.value);
    }
    if (this.source === 'config') {
      try {
        const config = JSON.parse(this.configText);
        if (config === null || typeof config !== 'object' || Array.isArray(config))
          throw new SyntaxError('it must be a JSON object {...}');
        scenario.model_config = config;
      } catch (error) {
        const reason =
          this.configText.trim() === '' ? 'paste or upload a config.json' : String(error);
        localError = {
          field: 'model_config',
          value: '',
          accepted: 'a config.json object',
          reason,
          message: `config.json: ${reason}`,
        };
      }
    }
    for (const option of this.context.options) {
      if (MODEL_KEYS.has(option.key)) continue;
      const raw = this.values.get(option.key);
      if (raw !== undefined && raw.trim() !== '') scenario[option.key] = coerce(option.kind, raw);
    }
    return { scenario, localError };
  }

  /** Shows a scenario (from a shared link): its model source and every option it sets. */
  load(scenario: Scenario): void {
    this.values.clear();
    if (scenario.model_config !== undefined) {
      this.source = 'config';
      this.configText = JSON.stringify(scenario.model_config, null, 2);
    } else if (
      scenario.model !== undefined &&
      isHubId(toText(scenario.model), this.context.presets)
    ) {
      // A Hub id from a link: used as is (the estimate fetches it); its details are fetched too.
      this.source = 'hub';
      this.hubModel = toText(scenario.model);
      this.hubInput.value = this.hubModel;
      this.hubError = null;
      void this.describeHubModel(this.hubModel);
    } else if (scenario.model !== undefined) {
      this.source = 'preset';
      this.presetName = toText(scenario.model);
    } else {
      this.source = 'custom';
    }
    for (const [key, value] of Object.entries(scenario)) {
      if (!MODEL_KEYS.has(key)) this.values.set(key, toText(value));
    }
    this.syncControls();
  }

  /** Placeholders and unset checkboxes/selects follow the scenario the core resolved. */
  setResolved(resolved: unknown): void {
    this.resolved = resolved;
    for (const field of this.fields.values()) this.showDefault(field);
  }

  /**
   * Shows the core's error beside the input it names (opening its group), or at the top of the
   * form when no input matches. null clears every error.
   */
  showError(error: ApiError | null): void {
    for (const field of this.fields.values()) this.setFieldError(field, null);
    this.setMessage(this.modelError, null);
    this.setMessage(this.formError, null);
    this.presetSelect.removeAttribute('aria-invalid');
    this.hubInput.removeAttribute('aria-invalid');
    this.configArea.removeAttribute('aria-invalid');
    if (!error) return;
    const field = this.fields.get(error.field);
    if (field) {
      this.setFieldError(field, error.message);
      return;
    }
    if (this.isModelError(error.field)) {
      this.setMessage(this.modelError, error.message);
      const control =
        this.source === 'config'
          ? this.configArea
          : this.source === 'hub'
            ? this.hubInput
            : this.presetSelect;
      control.setAttribute('aria-invalid', 'true');
      this.modelGroup.open = true;
      return;
    }
    this.setMessage(this.formError, error.message);
  }

  /** Where an error is shown: an option key, "model", or "form". For tests and focus. */
  errorTarget(error: ApiError): string {
    if (this.fields.has(error.field)) return error.field;
    return this.isModelError(error.field) ? 'model' : 'form';
  }

  private isModelError(field: string): boolean {
    return (
      field === 'model' ||
      field === 'model_config' ||
      field.startsWith('config') ||
      field.startsWith('moe.') ||
      ['hidden', 'ffn', 'vocab'].includes(field)
    );
  }

  resetAll(): void {
    this.values.clear();
    this.syncControls();
    this.onChange();
  }

  // ---------------------------------------------------------------------------------------------
  // Building

  private buildGroups(): HTMLDetailsElement {
    this.element.append(this.formError);
    const { layout } = this.context;
    const byGroup = new Map<string, OptionSpec[]>();
    for (const option of this.context.options) {
      if (MODEL_KEYS.has(option.key)) continue;
      const group = layout.groupOf(option);
      if (!byGroup.has(group)) byGroup.set(group, []);
      byGroup.get(group)!.push(option);
    }
    if (!byGroup.has('model')) byGroup.set('model', []);
    const groups = [
      ...layout.groupOrder.filter((g) => byGroup.has(g)),
      ...[...byGroup.keys()].filter((g) => !layout.groupOrder.includes(g)),
    ];
    let modelGroup: HTMLDetailsElement | null = null;
    for (const group of groups) {
      const details = el('details', { class: 'group', 'data-group': group });
      details.open = !layout.folded.has(group);
      const title = layout.groupTitle(group);
      const fieldset = el('fieldset', {}, el('legend', { class: 'sr-only' }, title));
      details.append(el('summary', {}, el('h2', {}, title)), fieldset);
      if (group === 'model') {
        modelGroup = details;
        fieldset.append(this.buildModelSource());
        fieldset.append(el('h3', { class: 'subgroup' }, 'Architecture'));
        fieldset.append(
          el(
            'p',
            { class: 'hint' },
            'Leave a field empty to keep the model’s value (shown greyed); type one to override it. ' +
              'A custom architecture needs hidden size, layers, heads, MLP size and vocabulary.',
          ),
        );
      }
      this.appendFields(fieldset, details, byGroup.get(group)!, layout.subgroups[group]);
      this.element.append(details);
    }
    this.syncControls();
    return modelGroup!;
  }

  private appendFields(
    fieldset: HTMLElement,
    details: HTMLDetailsElement,
    options: OptionSpec[],
    subgroups: { of: Record<string, string>; order: string[] } | undefined,
  ): void {
    if (!subgroups) {
      const grid = el('div', { class: 'fields' });
      for (const option of options) grid.append(this.buildField(option, details));
      fieldset.append(grid);
      return;
    }
    const titles = [...subgroups.order, 'Other'];
    for (const title of titles) {
      const members = options.filter((o) => (subgroups.of[o.key] ?? 'Other') === title);
      if (members.length === 0) continue;
      const grid = el('div', { class: 'fields' });
      for (const option of members) grid.append(this.buildField(option, details));
      fieldset.append(el('h3', { class: 'subgroup' }, title), grid);
    }
  }

  private buildModelSource(): HTMLElement {
    const choices: [ModelSource, string][] = [
      ['preset', 'Preset'],
      ['hub', 'Hugging Face Hub'],
      ['config', 'config.json'],
      ['custom', 'Custom architecture'],
    ];
    const radios = el('div', {
      class: 'source-choices',
      role: 'radiogroup',
      'aria-label': 'Model source',
    });
    for (const [value, text] of choices) {
      const radio = el('input', {
        type: 'radio',
        name: 'model-source',
        id: `f-source-${value}`,
        value,
        onchange: () => this.switchSource(value),
      });
      this.sourceRadios.set(value, radio);
      radios.append(
        el('span', { class: 'radio' }, radio, el('label', { for: `f-source-${value}` }, text)),
      );
    }

    const presetBlock = el(
      'div',
      { class: 'field wide', 'data-source': 'preset' },
      el('label', { for: 'f-model' }, 'Preset'),
      this.presetSelect,
      el(
        'button',
        {
          type: 'button',
          class: 'link-button',
          onclick: () => {
            this.configText = '';
            this.switchSource('config');
            this.sourceRadios.get('config')?.focus();
          },
        },
        'Edit this preset’s config.json',
      ),
    );

    const hubBlock = el(
      'div',
      { class: 'field wide', 'data-source': 'hub' },
      el('label', { for: 'f-hub-model' }, 'Fetch from the Hub'),
      el('div', { class: 'control-row' }, this.hubInput, this.hubButton),
      el(
        'small',
        { id: 'f-hub-help', class: 'help' },
        'The server downloads the repository’s config.json (and reads its safetensors headers) ' +
          'and the scenario uses that id; gated models need a server started with --hub-token.',
      ),
      this.hubPending,
      this.hubInfo,
    );

    const upload = el('input', {
      type: 'file',
      id: 'f-config-file',
      accept: '.json,application/json',
      onchange: async (e: Event) => {
        const file = (e.target as HTMLInputElement).files?.[0];
        if (!file) return;
        this.configText = await file.text();
        this.configArea.value = this.configText;
        this.onChange();
      },
    });
    this.configArea.addEventListener('input', () => {
      this.configText = this.configArea.value;
      this.onChange();
    });
    const configBlock = el(
      'div',
      { class: 'field wide', 'data-source': 'config' },
      el('label', { for: 'f-config-file' }, 'Upload a config.json'),
      upload,
      el('label', { for: 'f-model_config' }, 'or paste / edit it'),
      this.configArea,
      el(
        'small',
        { id: 'f-model_config-help', class: 'help' },
        'A Hugging Face config.json; multimodal files use their text_config.',
      ),
    );
    const customBlock = el(
      'p',
      { class: 'hint', 'data-source': 'custom' },
      'No model file: the architecture fields below describe a Llama-style decoder (MoE when ' +
        'routed experts > 0).',
    );
    return el(
      'div',
      { class: 'model-source' },
      radios,
      presetBlock,
      hubBlock,
      configBlock,
      customBlock,
      this.modelError,
    );
  }

  /** Typing a new id does not change the scenario until Fetch: say so. */
  private showHubPending(): void {
    const typed = this.hubInput.value.trim();
    // Not after a failed fetch of the same id: its error is shown instead.
    const pending = typed !== '' && typed !== this.hubModel && typed !== this.hubError?.value;
    this.hubPending.hidden = !pending;
    this.hubPending.textContent = pending
      ? `Press Fetch (or Enter) to use ${typed}` +
        (this.hubModel ? `; the results are for ${this.hubModel}.` : '.')
      : '';
  }

  /** Fetch pressed: ask the server for the id; on success the scenario uses it. */
  private async fetchHub(): Promise<void> {
    const id = this.hubInput.value.trim();
    if (id === '') {
      this.hubModel = null;
      this.hubError = hubPrompt(id);
      this.onChange();
      return;
    }
    const result = await this.describeHubModel(id);
    if (result === 'stale') return;
    this.hubModel = result === 'ok' ? id : null;
    this.showHubPending();
    this.onChange();
  }

  /**
   * Shows what the Hub holds for `id` (commit, parameters, checkpoint notes). Sets hubError on
   * failure; 'stale' when a newer fetch started meanwhile.
   */
  private async describeHubModel(id: string): Promise<'ok' | 'failed' | 'stale'> {
    const mine = ++this.hubRequest;
    this.hubButton.disabled = true;
    replace(this.hubInfo, el('p', { class: 'status' }, `Fetching ${id} from the Hub…`));
    let result: ApiResult<HubModel>;
    try {
      result = await this.context.fetchHub(id);
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
    if (mine !== this.hubRequest) return 'stale';
    this.hubButton.disabled = false;
    if (!result.ok) {
      this.hubError = result.error;
      replace(this.hubInfo);
      return 'failed';
    }
    this.hubError = null;
    replace(this.hubInfo, hubSummary(result.value));
    return 'ok';
  }

  private buildPresetSelect(): HTMLSelectElement {
    const select = el('select', {
      id: 'f-model',
      'aria-describedby': 'f-model-error',
      onchange: (e: Event) => {
        this.presetName = (e.target as HTMLSelectElement).value;
        this.onChange();
      },
    });
    for (const preset of this.context.presets) {
      const params = preset.total ? ` — ${paramCount(preset.total)} params` : '';
      select.append(el('option', { value: preset.name }, `${preset.name}${params}`));
    }
    return select;
  }

  /** config.json starts from the chosen preset's file, so there is something to edit. */
  private switchSource(source: ModelSource): void {
    this.source = source;
    this.syncControls();
    if (source === 'config' && this.configText.trim() === '')
      void this.copyPresetConfig().then(() => this.onChange());
    else this.onChange();
  }

  private async copyPresetConfig(): Promise<void> {
    try {
      const config = await this.context.loadPresetConfig(this.presetName);
      this.configText = JSON.stringify(config, null, 2);
    } catch (error) {
      this.configText = '';
      this.setMessage(
        this.modelError,
        `Could not load ${this.presetName}'s config.json: ${String(error)}`,
      );
    }
    this.configArea.value = this.configText;
  }

  private buildField(option: OptionSpec, group: HTMLDetailsElement): HTMLElement {
    const id = `f-${option.key}`;
    const control = this.buildControl(option, id);
    control.setAttribute('aria-describedby', `${id}-error ${id}-help`);
    control.dataset.key = option.key;
    const reset = el(
      'button',
      {
        type: 'button',
        class: 'reset',
        hidden: true,
        title: 'Back to the default',
        'aria-label': `Reset ${this.context.layout.labelFor(option.key)} to its default`,
        onclick: () => {
          this.values.delete(option.key);
          this.syncField(field);
          this.onChange();
          control.focus();
        },
      },
      '↺',
    );
    const error = el('p', { id: `${id}-error`, class: 'field-error', hidden: true });
    const help = el(
      'small',
      { id: `${id}-help`, class: 'help' },
      option.help,
      option.default ? ` · default ${option.default}` : '',
      ' · ',
      el('code', {}, option.flag ?? `--${option.key.replace(/_/g, '-')}`),
    );
    const field: Field = { option, control, reset, error, group };
    this.fields.set(option.key, field);
    const isCheck = option.kind === 'bool';
    const label = el('label', { for: id }, this.context.layout.labelFor(option.key));
    const row = isCheck
      ? el('div', { class: 'control-row check' }, control, label, reset)
      : el('div', { class: 'control-row' }, control, reset);
    return el(
      'div',
      { class: `field${isCheck ? ' field-check' : ''}`, 'data-field': option.key },
      isCheck ? null : label,
      row,
      help,
      error,
    );
  }

  private buildControl(option: OptionSpec, id: string): HTMLInputElement | HTMLSelectElement {
    const key = option.key;
    if (option.kind === 'bool') {
      const box = el('input', { type: 'checkbox', id });
      box.addEventListener('change', () => this.userSet(key, box.checked ? 'true' : 'false'));
      return box;
    }
    if (option.kind === 'choice' || key === 'gpu') {
      const select = el('select', { id });
      select.addEventListener('change', () => this.userSet(key, select.value));
      return select;
    }
    const input = el('input', {
      type: 'text',
      id,
      inputmode:
        option.kind === 'integer' ? 'numeric' : option.kind === 'number' ? 'decimal' : null,
      autocomplete: 'off',
      spellcheck: 'false',
    });
    input.addEventListener('input', () => this.userSet(key, input.value));
    return input;
  }

  private userSet(key: string, raw: string): void {
    if (raw === '') this.values.delete(key);
    else this.values.set(key, raw);
    const field = this.fields.get(key);
    if (field) field.reset.hidden = !this.values.has(key);
    this.onChange();
  }

  // ---------------------------------------------------------------------------------------------
  // Showing state

  private syncControls(): void {
    for (const [value, radio] of this.sourceRadios) radio.checked = value === this.source;
    for (const block of this.element.querySelectorAll<HTMLElement>('[data-source]'))
      block.hidden = block.dataset.source !== this.source;
    if (![...this.presetSelect.options].some((o) => o.value === this.presetName)) {
      // A name from a link that is not a preset (a Hub id, a typo): keep it; the core judges it.
      this.presetSelect.append(el('option', { value: this.presetName }, this.presetName));
    }
    this.presetSelect.value = this.presetName;
    this.configArea.value = this.configText;
    for (const field of this.fields.values()) this.syncField(field);
  }

  private syncField(field: Field): void {
    const raw = this.values.get(field.option.key);
    const { control } = field;
    field.reset.hidden = raw === undefined;
    if (control instanceof HTMLSelectElement) {
      this.fillSelect(field, control);
      control.value = raw ?? '';
    } else if (control.type === 'checkbox') {
      if (raw !== undefined) control.checked = raw === 'true';
    } else {
      control.value = raw ?? '';
    }
    control.classList.toggle('is-set', raw !== undefined);
    this.showDefault(field);
  }

  /** The first entry of a select means "unset" and names the default; then the choices. */
  private fillSelect(field: Field, select: HTMLSelectElement): void {
    const choices: [string, string][] =
      field.option.key === 'gpu'
        ? this.context.gpus.map((g) => [g.id, `${g.name} (${gib(g.usable_bytes)})`])
        : field.option.choices.map((c) => [c, c]);
    const raw = this.values.get(field.option.key);
    if (raw !== undefined && !choices.some(([value]) => value === raw)) choices.push([raw, raw]);
    const wanted = ['', ...choices.map(([value]) => value)].join('\n');
    if (select.dataset.choices === wanted) return;
    replace(
      select,
      el('option', { value: '' }, 'default'),
      ...choices.map(([v, t]) => el('option', { value: v }, t)),
    );
    select.dataset.choices = wanted;
  }

  private showDefault(field: Field): void {
    const { option, control } = field;
    const resolved = this.context.layout.resolved(this.resolved, option.key);
    const shown = resolved !== undefined ? toText(resolved) : option.default;
    if (control instanceof HTMLSelectElement) {
      const first = control.options[0];
      if (first) first.textContent = `default${shown ? ` (${shown})` : ''}`;
    } else if (control.type === 'checkbox') {
      if (!this.values.has(option.key))
        control.checked =
          resolved === true || (resolved === undefined && option.default === 'true');
    } else {
      control.placeholder = shown;
    }
  }

  private setFieldError(field: Field, message: string | null): void {
    this.setMessage(field.error, message);
    if (message) {
      field.control.setAttribute('aria-invalid', 'true');
      field.group.open = true;
    } else {
      field.control.removeAttribute('aria-invalid');
    }
  }

  private setMessage(target: HTMLElement, message: string | null): void {
    target.textContent = message ?? '';
    target.hidden = !message;
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
function storedSize(bytes: number): string {
  return bytes >= 2 ** 30 ? gib(bytes) : `${(bytes / 2 ** 20).toFixed(2)} MiB`;
}
