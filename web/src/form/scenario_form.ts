// A scenario form built from an option list (GET /api/options for training, /api/infer/options
// for serving) so that every CLI input appears. It keeps only what the user set; unset inputs
// show the value the core resolved as a placeholder. The model comes from the model source
// (preset, Hub, config.json or the architecture fields alone); the sections follow the view's
// layout.

import { el } from '../dom';
import { coerce, toText } from '../scenario';
import type { ApiError, Gpu, OptionSpec, Scenario } from '../types';
import { IMPORT_KEYS } from './config_io';
import { MODEL_KEYS, sectionsOf, subgroupsOf, type FormLayout } from './layout';
import { ModelSourceInput, isModelError, type ModelSourceContext } from './model_source';
import { selectChoices } from './option_choices';
import { OptionField } from './option_field';

export interface FormContext extends ModelSourceContext {
  options: OptionSpec[];
  gpus: Gpu[];
  layout: FormLayout;
}

/** What the form holds now: the scenario to send, or why it cannot be sent yet. */
export type FormState = { scenario: Scenario; localError: ApiError | null };

export class ScenarioForm {
  readonly element: HTMLFormElement;
  private readonly fields = new Map<string, OptionField>();
  /** The text of every option the user set (booleans as "true"/"false"). */
  private readonly values = new Map<string, string>();
  private resolved: unknown = null;
  private readonly model: ModelSourceInput;
  private readonly formError: HTMLElement;
  /** The section holding the model source: opened to show a model error. */
  private readonly modelGroup: HTMLDetailsElement;

  constructor(
    private readonly context: FormContext,
    private readonly onChange: () => void,
  ) {
    this.model = new ModelSourceInput(context, onChange, () => this.syncControls());
    this.formError = el('p', { id: 'form-error', class: 'field-error form-error', hidden: true });
    this.element = el('form', {
      class: 'scenario-form',
      'aria-label': context.layout.ariaLabel,
      novalidate: true,
      onsubmit: (e: Event) => e.preventDefault(),
    });
    this.modelGroup = this.buildSections();
  }

  // ---------------------------------------------------------------------------------------------
  // State in and out

  /** The scenario to send: the model (preset, Hub id, config.json or none) and every option set. */
  state(): FormState {
    const scenario: Scenario = {};
    const localError = this.model.addTo(scenario);
    for (const option of this.context.options) {
      if (MODEL_KEYS.has(option.key) || IMPORT_KEYS.has(option.key)) continue;
      const raw = this.values.get(option.key);
      if (raw !== undefined && raw.trim() !== '') scenario[option.key] = coerce(option.kind, raw);
    }
    return { scenario, localError };
  }

  /**
   * Shows a scenario (from a shared link or a pasted config): its model source and every option it
   * sets; every other option goes back to its default. A pasted text ("from") is the paste box's.
   */
  load(scenario: Scenario): void {
    this.values.clear();
    this.model.load(scenario);
    for (const [key, value] of Object.entries(scenario)) {
      if (!MODEL_KEYS.has(key) && !IMPORT_KEYS.has(key)) this.values.set(key, toText(value));
    }
    this.syncControls();
  }

  /** The settings this form has an input for (the model's included). */
  keys(): Set<string> {
    const keys = new Set([...MODEL_KEYS, ...this.fields.keys()]);
    return keys;
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
    for (const field of this.fields.values()) field.setError(null);
    this.model.showError(null);
    this.setFormError(null);
    if (!error) return;
    const field = this.fields.get(error.field);
    if (field) {
      field.setError(error.message);
      return;
    }
    if (isModelError(error.field)) {
      this.model.showError(error.message);
      this.modelGroup.open = true;
      return;
    }
    this.setFormError(error.message);
  }

  /** Where an error is shown: an option key, "model", or "form". For tests and focus. */
  errorTarget(error: ApiError): string {
    if (this.fields.has(error.field)) return error.field;
    return isModelError(error.field) ? 'model' : 'form';
  }

  resetAll(): void {
    this.values.clear();
    this.syncControls();
    this.onChange();
  }

  // ---------------------------------------------------------------------------------------------
  // Building

  /** One folding section per group of the layout; returns the model's. */
  private buildSections(): HTMLDetailsElement {
    this.element.append(this.formError);
    const { layout } = this.context;
    let modelGroup: HTMLDetailsElement | null = null;
    for (const [group, options] of sectionsOf(this.context.options, layout)) {
      const details = el('details', { class: 'group', 'data-group': group });
      details.open = !layout.folded.has(group);
      const title = layout.groupTitle(group);
      const fieldset = el('fieldset', {}, el('legend', { class: 'sr-only' }, title));
      details.append(el('summary', {}, el('h2', {}, title)), fieldset);
      if (group === 'model') {
        modelGroup = details;
        fieldset.append(this.model.element);
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
      const subgroups = layout.subgroups[group];
      if (!subgroups) {
        fieldset.append(this.fieldGrid(options, details));
      } else {
        for (const [subtitle, members] of subgroupsOf(options, subgroups))
          fieldset.append(
            el('h3', { class: 'subgroup' }, subtitle),
            this.fieldGrid(members, details),
          );
      }
      this.element.append(details);
    }
    this.syncControls();
    return modelGroup!;
  }

  private fieldGrid(options: OptionSpec[], details: HTMLDetailsElement): HTMLElement {
    const grid = el('div', { class: 'fields' });
    for (const option of options) grid.append(this.buildField(option, details).element);
    return grid;
  }

  private buildField(option: OptionSpec, group: HTMLDetailsElement): OptionField {
    const key = option.key;
    const field = new OptionField(option, group, this.context.layout.labelFor(key), {
      input: (raw) => this.userSet(field, raw),
      reset: () => {
        this.values.delete(key);
        this.syncField(field);
        this.onChange();
      },
    });
    this.fields.set(key, field);
    return field;
  }

  private userSet(field: OptionField, raw: string): void {
    const key = field.option.key;
    if (raw === '') this.values.delete(key);
    else this.values.set(key, raw);
    field.showResetButton(this.values.has(key));
    this.onChange();
  }

  // ---------------------------------------------------------------------------------------------
  // Showing state

  private syncControls(): void {
    this.model.sync();
    for (const field of this.fields.values()) this.syncField(field);
  }

  private syncField(field: OptionField): void {
    const raw = this.values.get(field.option.key);
    field.show(raw, selectChoices(field.option, this.context.gpus, raw));
    this.showDefault(field);
  }

  private showDefault(field: OptionField): void {
    const key = field.option.key;
    field.showDefault(this.context.layout.resolved(this.resolved, key), this.values.has(key));
  }

  private setFormError(message: string | null): void {
    this.formError.textContent = message ?? '';
    this.formError.hidden = !message;
  }
}
