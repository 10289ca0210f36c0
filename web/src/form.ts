// The training scenario form, built from GET /api/options so that every CLI input appears. It
// keeps only what the user set; unset inputs show the value the core resolved as a placeholder.

import { el, replace } from '../../dom';
import { gib, paramCount } from '../../format';
import { coerce, resolvedValue, toText } from '../../scenario';
import type { ApiError, Gpu, OptionSpec, Preset, Scenario } from '../../types';
import { GROUP_ORDER, SUBGROUPS, SUBGROUP_ORDER, cliFlag, groupTitle, labelFor } from './labels';

export type ModelSource = 'preset' | 'config' | 'custom';

export interface FormContext {
  options: OptionSpec[];
  presets: Preset[];
  gpus: Gpu[];
  /** The config.json of a preset (GET /api/models/{name}). */
  loadPresetConfig: (name: string) => Promise<unknown>;
}

/** What the form holds now: the scenario to send, or why it cannot be sent yet. */
export type FormState = { scenario: Scenario; localError: ApiError | null };

const MODEL_KEYS = new Set(['model', 'model_config']);
const DEFAULT_PRESET = 'Llama-3.1-8B';
/** Groups that start folded: rarely changed, and long on a phone. */
const FOLDED_GROUPS = new Set(['overheads']);

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

  private readonly presetSelect: HTMLSelectElement;
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
      'aria-label': 'Training scenario',
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
    this.configArea.removeAttribute('aria-invalid');
    if (!error) return;
    const field = this.fields.get(error.field);
    if (field) {
      this.setFieldError(field, error.message);
      return;
    }
    if (this.isModelError(error.field)) {
      this.setMessage(this.modelError, error.message);
      const control = this.source === 'config' ? this.configArea : this.presetSelect;
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
    const byGroup = new Map<string, OptionSpec[]>();
    for (const option of this.context.options) {
      if (MODEL_KEYS.has(option.key)) continue;
      if (!byGroup.has(option.group)) byGroup.set(option.group, []);
      byGroup.get(option.group)!.push(option);
    }
    if (!byGroup.has('model')) byGroup.set('model', []);
    const groups = [
      ...GROUP_ORDER.filter((g) => byGroup.has(g)),
      ...[...byGroup.keys()].filter((g) => !GROUP_ORDER.includes(g)),
    ];
    let modelGroup: HTMLDetailsElement | null = null;
    for (const group of groups) {
      const details = el('details', { class: 'group', 'data-group': group });
      details.open = !FOLDED_GROUPS.has(group);
      const fieldset = el('fieldset', {}, el('legend', { class: 'sr-only' }, groupTitle(group)));
      details.append(el('summary', {}, el('h2', {}, groupTitle(group))), fieldset);
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
      this.appendFields(fieldset, details, byGroup.get(group)!, group === 'parallelism');
      this.element.append(details);
    }
    this.syncControls();
    return modelGroup!;
  }

  private appendFields(
    fieldset: HTMLElement,
    details: HTMLDetailsElement,
    options: OptionSpec[],
    withSubgroups: boolean,
  ): void {
    if (!withSubgroups) {
      const grid = el('div', { class: 'fields' });
      for (const option of options) grid.append(this.buildField(option, details));
      fieldset.append(grid);
      return;
    }
    const titles = [...SUBGROUP_ORDER, 'Other'];
    for (const title of titles) {
      const members = options.filter((o) => (SUBGROUPS[o.key] ?? 'Other') === title);
      if (members.length === 0) continue;
      const grid = el('div', { class: 'fields' });
      for (const option of members) grid.append(this.buildField(option, details));
      fieldset.append(el('h3', { class: 'subgroup' }, title), grid);
    }
  }

  private buildModelSource(): HTMLElement {
    const choices: [ModelSource, string][] = [
      ['preset', 'Preset'],
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
      configBlock,
      customBlock,
      this.modelError,
    );
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
        'aria-label': `Reset ${labelFor(option.key)} to its default`,
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
      el('code', {}, option.flag ?? cliFlag(option.key)),
    );
    const field: Field = { option, control, reset, error, group };
    this.fields.set(option.key, field);
    const isCheck = option.kind === 'bool';
    const label = el('label', { for: id }, labelFor(option.key));
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
    const resolved = resolvedValue(this.resolved, option.key);
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
