// Where the scenario's model comes from: a preset, the Hugging Face Hub (fetched through the
// server), a config.json (uploaded or pasted, starting from the chosen preset's file), or the
// architecture fields alone. Only the chosen source's block is shown; only it goes into the
// scenario.

import { el } from '../dom';
import { paramCount } from '../format';
import { toText } from '../scenario';
import type { ApiError, Preset, Scenario } from '../types';
import { HubModelInput, isHubId, type FetchHub } from './hub_model_input';

export type ModelSource = 'preset' | 'hub' | 'config' | 'custom';

const DEFAULT_PRESET = 'Llama-3.1-8B';

const SOURCE_CHOICES: [ModelSource, string][] = [
  ['preset', 'Preset'],
  ['hub', 'Hugging Face Hub'],
  ['config', 'config.json'],
  ['custom', 'Custom architecture'],
];

/** What the model source needs from the page. */
export interface ModelSourceContext {
  presets: Preset[];
  /** The config.json of a preset (GET /api/models/{name}). */
  loadPresetConfig: (name: string) => Promise<unknown>;
  fetchHub: FetchHub;
}

/**
 * Whether one of the core's errors is about the model as a whole (its name, its config.json or
 * an architecture value read from it) rather than one option: the model source shows it.
 */
export function isModelError(field: string): boolean {
  return (
    field === 'model' ||
    field === 'model_config' ||
    field.startsWith('config') ||
    field.startsWith('moe.') ||
    ['hidden', 'ffn', 'vocab'].includes(field)
  );
}

/** The text of the config.json box as the object to send, or why it cannot be sent. */
export function parseModelConfig(text: string): { config: object } | { error: ApiError } {
  try {
    const config = JSON.parse(text);
    if (config === null || typeof config !== 'object' || Array.isArray(config))
      throw new SyntaxError('it must be a JSON object {...}');
    return { config };
  } catch (error) {
    const reason = text.trim() === '' ? 'paste or upload a config.json' : String(error);
    return {
      error: {
        field: 'model_config',
        value: '',
        accepted: 'a config.json object',
        reason,
        message: `config.json: ${reason}`,
      },
    };
  }
}

/** The preset a model names, by name or Hub id (a pasted config names it by its Hub id). */
export function presetName(model: string, presets: Preset[]): string {
  const lower = model.toLowerCase();
  return presets.find((p) => p.hub_id?.toLowerCase() === lower)?.name ?? model;
}

export class ModelSourceInput {
  readonly element: HTMLElement;
  private source: ModelSource = 'preset';
  private presetName = DEFAULT_PRESET;
  private configText = '';
  private readonly presetSelect: HTMLSelectElement;
  private readonly hub: HubModelInput;
  private readonly configArea: HTMLTextAreaElement;
  private readonly error: HTMLElement;
  private readonly sourceRadios = new Map<ModelSource, HTMLInputElement>();

  /**
   * `onSwitch` runs when the user picks another source, before `onChange`: the form redraws then,
   * this block (sync()) and every field (marking those set since the last redraw), as on load.
   */
  constructor(
    private readonly context: ModelSourceContext,
    private readonly onChange: () => void,
    private readonly onSwitch: () => void,
  ) {
    this.presetSelect = this.buildPresetSelect();
    this.hub = new HubModelInput(context.fetchHub, onChange);
    this.configArea = el('textarea', {
      id: 'f-model_config',
      rows: 8,
      spellcheck: 'false',
      'aria-describedby': 'f-model-error f-model_config-help',
      placeholder: '{"model_type": "llama", "hidden_size": 4096, ...}',
    });
    this.error = el('p', { id: 'f-model-error', class: 'field-error', hidden: true });
    this.element = el(
      'div',
      { class: 'model-source' },
      this.buildRadios(),
      this.buildPresetBlock(),
      this.hub.element,
      this.buildConfigBlock(),
      el(
        'p',
        { class: 'hint', 'data-source': 'custom' },
        'No model file: the architecture fields below describe a Llama-style decoder (MoE when ' +
          'routed experts > 0).',
      ),
      this.error,
    );
  }

  /** Puts the model (preset, Hub id, config.json or none) into `scenario`; why it cannot be sent. */
  addTo(scenario: Scenario): ApiError | null {
    if (this.source === 'preset') scenario.model = this.presetName;
    if (this.source === 'hub') {
      const { model, error } = this.hub.chosen();
      if (model !== null) scenario.model = model;
      else return error;
    }
    if (this.source === 'config') {
      const parsed = parseModelConfig(this.configText);
      if ('error' in parsed) return parsed.error;
      scenario.model_config = parsed.config;
    }
    return null;
  }

  /** Takes the model of a scenario (from a shared link); sync() then shows it. */
  load(scenario: Scenario): void {
    if (scenario.model_config !== undefined) {
      this.source = 'config';
      this.configText = JSON.stringify(scenario.model_config, null, 2);
    } else if (
      scenario.model !== undefined &&
      isHubId(toText(scenario.model), this.context.presets)
    ) {
      this.source = 'hub';
      this.hub.useFromLink(toText(scenario.model));
    } else if (scenario.model !== undefined) {
      this.source = 'preset';
      this.presetName = presetName(toText(scenario.model), this.context.presets);
    } else {
      this.source = 'custom';
    }
  }

  /** The core's message about the model, beside the chosen source's input; null clears it. */
  showError(message: string | null): void {
    this.setMessage(message);
    this.presetSelect.removeAttribute('aria-invalid');
    this.hub.input.removeAttribute('aria-invalid');
    this.configArea.removeAttribute('aria-invalid');
    if (!message) return;
    const control =
      this.source === 'config'
        ? this.configArea
        : this.source === 'hub'
          ? this.hub.input
          : this.presetSelect;
    control.setAttribute('aria-invalid', 'true');
  }

  /** Shows the chosen source: its radio checked, only its block visible, its value in place. */
  sync(): void {
    for (const [value, radio] of this.sourceRadios) radio.checked = value === this.source;
    for (const block of this.element.querySelectorAll<HTMLElement>('[data-source]'))
      block.hidden = block.dataset.source !== this.source;
    if (![...this.presetSelect.options].some((o) => o.value === this.presetName)) {
      // A name from a link that is not a preset (a Hub id, a typo): keep it; the core judges it.
      this.presetSelect.append(el('option', { value: this.presetName }, this.presetName));
    }
    this.presetSelect.value = this.presetName;
    this.configArea.value = this.configText;
  }

  // ---------------------------------------------------------------------------------------------
  // Building

  private buildRadios(): HTMLElement {
    const radios = el('div', {
      class: 'source-choices',
      role: 'radiogroup',
      'aria-label': 'Model source',
    });
    for (const [value, text] of SOURCE_CHOICES) {
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
    return radios;
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

  private buildPresetBlock(): HTMLElement {
    return el(
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
  }

  private buildConfigBlock(): HTMLElement {
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
    return el(
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
  }

  // ---------------------------------------------------------------------------------------------
  // Switching source

  /** config.json starts from the chosen preset's file, so there is something to edit. */
  private switchSource(source: ModelSource): void {
    this.source = source;
    this.onSwitch();
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
      this.setMessage(`Could not load ${this.presetName}'s config.json: ${String(error)}`);
    }
    this.configArea.value = this.configText;
  }

  private setMessage(message: string | null): void {
    this.error.textContent = message ?? '';
    this.error.hidden = !message;
  }
}
