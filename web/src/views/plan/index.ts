// The plan view: a model, a GPU count and a batch in; the fastest parallel layouts that fit out
// (POST /api/plan, the same search as `vramplan plan`). A search takes from milliseconds to
// seconds, so it runs on the Run button, shows that it is searching, and drops answers to
// older requests.

import { TransportError, api, type ApiResult } from '../../api';
import { el, replace } from '../../dom';
import { LatestOnly } from '../../live';
import { toText } from '../../scenario';
import type { ApiError, Scenario } from '../../types';
import type { View, ViewHost } from '../view';
import {
  ALL_FIELDS,
  FIXED_FIELDS,
  MAIN_FIELDS,
  planSettings,
  searchStatsText,
  type PlanAnswer,
  type PlanField,
} from './plan_data';
import { PlanResults } from './results';

export const planView: View = {
  id: 'plan',
  title: 'Plan',
  // The plan form keeps every value as the text of its input, so a shared link's values need
  // no typing: they go into the inputs as they are.
  options: () => [],
  mount(container, host) {
    new PlanPage(container, host);
  },
};

const DEFAULTS: Record<string, string> = { model: 'Llama-3.1-8B', gpu: 'h100-80gb' };

class PlanPage {
  private readonly inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
  private readonly errors = new Map<string, HTMLElement>();
  private readonly formError = el('p', {
    class: 'field-error form-error',
    id: 'plan-form-error',
    role: 'alert',
    hidden: true,
  });
  private readonly status = el('p', { class: 'status', id: 'plan-status', 'aria-live': 'polite' });
  private readonly results = new PlanResults();
  private readonly runButton = el('button', { type: 'submit', id: 'plan-run' }, 'Run search');
  private readonly cancelButton = el(
    'button',
    { type: 'button', id: 'plan-cancel', class: 'secondary', hidden: true },
    'Cancel',
  );
  private readonly requests = new LatestOnly<ApiResult<PlanAnswer>>();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    container: HTMLElement,
    private readonly host: ViewHost,
  ) {
    this.cancelButton.addEventListener('click', () => this.cancel());
    const form = el(
      'form',
      { class: 'plan-form', 'aria-label': 'Plan inputs', novalidate: true },
      el('fieldset', {}, el('legend', { class: 'subgroup' }, 'Search'), this.fields(MAIN_FIELDS)),
      el(
        'details',
        { class: 'group' },
        el('summary', {}, 'Fix dimensions (optional; empty ones are searched)'),
        el('fieldset', {}, this.fields(FIXED_FIELDS)),
      ),
      this.formError,
      el('div', { class: 'toolbar' }, this.runButton, this.cancelButton),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.run();
    });
    replace(
      container,
      el(
        'div',
        { class: 'training-view plan-view' },
        el(
          'aside',
          { class: 'inputs', 'aria-label': 'Inputs' },
          el('h2', {}, 'Plan a layout'),
          form,
        ),
        el('div', { class: 'outputs' }, this.status, this.results.element),
      ),
    );
    this.load(host.initial);
    void this.run();
  }

  // ---------------------------------------------------------------------------------------------
  // Inputs

  private fields(fields: PlanField[]): HTMLElement {
    return el(
      'div',
      { class: 'fields' },
      fields.map((f) => this.field(f)),
    );
  }

  private field(field: PlanField): HTMLElement {
    const id = `plan-${field.key}`;
    const control = this.control(field, id);
    control.setAttribute('aria-describedby', `${id}-help ${id}-error`);
    control.addEventListener('change', () => this.host.publish(this.settings()));
    this.inputs.set(field.key, control);
    const error = el('p', { class: 'field-error', id: `${id}-error`, hidden: true });
    this.errors.set(field.key, error);
    return el(
      'div',
      { class: 'field' },
      el('label', { for: id }, field.label),
      control,
      el('span', { class: 'help', id: `${id}-help` }, field.help),
      error,
    );
  }

  private control(field: PlanField, id: string): HTMLInputElement | HTMLSelectElement {
    if (field.key === 'model')
      return this.select(
        id,
        this.host.data.presets.map((p) => [p.name, p.name]),
        null,
      );
    if (field.key === 'gpu')
      return this.select(
        id,
        this.host.data.gpus.map((g) => [g.id, g.name]),
        null,
      );
    if (field.kind === 'choice')
      return this.select(
        id,
        (field.choices ?? []).map((c) => [c, c]),
        field.key === 'framework' ? 'none (generic)' : 'any (searched)',
      );
    return el('input', {
      type: 'text',
      id,
      name: field.key,
      inputmode: field.kind === 'integer' ? 'numeric' : 'decimal',
      autocomplete: 'off',
      placeholder: field.kind === 'integer' || field.kind === 'number' ? 'default' : '',
    });
  }

  private select(id: string, choices: [string, string][], anyLabel: string | null) {
    return el(
      'select',
      { id, name: id.replace(/^plan-/, '') },
      anyLabel === null ? null : el('option', { value: '' }, anyLabel),
      choices.map(([value, text]) => el('option', { value }, text)),
    );
  }

  /** Fills the inputs from a shared link, or the defaults for a new view. */
  private load(initial: Scenario): void {
    const fromLink = Object.keys(initial).length > 0;
    for (const field of ALL_FIELDS) {
      const control = this.inputs.get(field.key)!;
      const given = initial[field.key];
      const text =
        given !== undefined
          ? toText(given)
          : fromLink
            ? (DEFAULTS[field.key] ?? '')
            : (DEFAULTS[field.key] ?? field.initial ?? '');
      if (control instanceof HTMLSelectElement && text !== '' && !hasOption(control, text))
        control.append(el('option', { value: text }, text));
      control.value = text;
    }
  }

  private settings(): Scenario {
    const values: Record<string, string> = {};
    for (const [key, control] of this.inputs) values[key] = control.value;
    return planSettings(values);
  }

  // ---------------------------------------------------------------------------------------------
  // Searching

  private async run(): Promise<void> {
    const settings = this.settings();
    this.host.publish(settings);
    this.showError(null);
    this.searching(true);
    let outcome;
    try {
      outcome = await this.requests.run((signal) => api.plan<PlanAnswer>(settings, signal));
    } catch (error) {
      this.searching(false);
      this.showError({
        field: '',
        value: '',
        accepted: '',
        reason: '',
        message: error instanceof TransportError ? error.message : String(error),
      });
      return;
    }
    if (!outcome.current) return;
    this.searching(false);
    if (!outcome.value.ok) {
      this.showError(outcome.value.error);
      this.results.clear();
      this.status.textContent = 'No search: fix the input marked above.';
      return;
    }
    this.status.textContent = searchStatsText(outcome.value.value);
    this.results.show(outcome.value.value);
  }

  private cancel(): void {
    this.requests.cancel();
    this.searching(false);
    this.status.textContent = 'Search cancelled.';
  }

  private searching(on: boolean): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.cancelButton.hidden = !on;
    this.results.setSearching(on);
    if (on) {
      const started = performance.now();
      const tick = () =>
        (this.status.textContent = `Searching… ${((performance.now() - started) / 1000).toFixed(1)} s`);
      tick();
      this.timer = setInterval(tick, 200);
    }
  }

  private showError(error: ApiError | null): void {
    for (const node of this.errors.values()) node.hidden = true;
    for (const control of this.inputs.values()) control.removeAttribute('aria-invalid');
    this.formError.hidden = true;
    if (!error) return;
    const beside = this.errors.get(error.field);
    const target = beside ?? this.formError;
    target.textContent = error.message;
    target.hidden = false;
    if (beside) {
      beside.setAttribute('role', 'alert');
      this.inputs.get(error.field)!.setAttribute('aria-invalid', 'true');
    }
  }
}

function hasOption(select: HTMLSelectElement, value: string): boolean {
  return Array.from(select.options).some((o) => o.value === value);
}
