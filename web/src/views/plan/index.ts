// The plan view: a model, a GPU count and a batch in; the fastest parallel layouts that fit out
// (POST /api/plan, the same search as `vramplan plan`). A search takes from milliseconds to
// seconds, so it runs on the Run button, shows that it is searching, and drops answers to
// older requests. A pasted training config fills the inputs (its layout is left to the search;
// what the form has no input for is kept beside it), and the winner can be copied as a config.

import { TransportError, api, type ApiResult } from '../../api';
import { el, replace } from '../../dom';
import { ConfigExport } from '../../form/config_export';
import { importBody, importSummary } from '../../form/config_io';
import { ImportReport } from '../../form/import_report';
import { PasteBox, type ReadOutcome } from '../../form/paste_box';
import { LatestOnly } from '../../live';
import type { ApiError, Scenario } from '../../types';
import type { View, ViewHost } from '../view';
import { PlanExtras } from './extras';
import {
  ALL_FIELDS,
  FIXED_FIELDS,
  MAIN_FIELDS,
  PASTED_MODEL,
  missingRequired,
  planEmitBody,
  planFromSettings,
  planRequest,
  planSettings,
  searchStatsText,
  type PlanAnswer,
  type PlanField,
} from './plan_data';
import { PlanResults } from './results';
import { SPACE_POINTS } from './space_data';

export const planView: View = {
  id: 'plan',
  title: 'Plan',
  // A shared link's values are typed as the training settings: the plan inputs take their text,
  // and the settings the plan form has no input for (a pasted config's) keep their type.
  options: (data) => data.options,
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
  private readonly results: PlanResults;
  private readonly extras: PlanExtras;
  private readonly report = new ImportReport('plan-import-report');
  private readonly paste: PasteBox;
  private readonly exporter: ConfigExport;
  /** The settings of the search shown: "Copy as" writes its winner. */
  private shownSearch: Scenario | null = null;
  private readonly runButton = el('button', { type: 'submit', id: 'plan-run' }, 'Run search');
  private readonly cancelButton = el(
    'button',
    { type: 'button', id: 'plan-cancel', class: 'secondary', hidden: true },
    'Cancel',
  );
  private readonly requests = new LatestOnly<ApiResult<PlanAnswer>>();
  private readonly reads = new LatestOnly<ApiResult<PlanAnswer>>();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    container: HTMLElement,
    private readonly host: ViewHost,
  ) {
    this.cancelButton.addEventListener('click', () => this.cancel());
    const formats = host.data.formats.training;
    this.paste = new PasteBox({
      view: 'plan',
      formats: formats.from,
      placeholder:
        'torchrun ... pretrain_gpt.py --num-layers 32 ... (its model, batch and training; the layout is searched)',
      reportId: this.report.element.id,
      read: (text, format) => this.readPaste(text, format),
    });
    this.exporter = new ConfigExport({
      id: 'plan-emit',
      title: 'Run the winner',
      hint: 'The fastest layout written as a framework’s launch script or config, with the model and training above; when a format cannot express it, the fastest one it can (of the top 100), and a note says which.',
      formats: formats.emit,
      request: (format) =>
        this.shownSearch ? api.emit('/api/plan', planEmitBody(this.shownSearch, format)) : null,
      model: () => this.shownSearch?.model,
    });
    this.results = new PlanResults(this.exporter.element);
    this.extras = new PlanExtras(() => this.dropExtras());
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
      this.extras.element,
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
          this.paste.element,
          form,
        ),
        el('div', { class: 'outputs' }, this.report.element, this.status, this.results.element),
      ),
    );
    this.load(host.initial, Object.keys(host.initial).length > 0);
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
        field.unset ?? (field.key === 'framework' ? 'none (generic)' : 'any (searched)'),
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

  /**
   * Fills the inputs from a shared link (every setting it holds), a pasted config's settings (its
   * layout left to the search, the other inputs back to their defaults), or the defaults.
   */
  private load(settings: Scenario, fromLink: boolean): void {
    const { fields, extras } = planFromSettings(settings, fromLink);
    this.extras.set(extras);
    this.syncPastedModel();
    for (const field of ALL_FIELDS) {
      const control = this.inputs.get(field.key)!;
      const text =
        fields[field.key] ?? DEFAULTS[field.key] ?? (fromLink ? '' : (field.initial ?? ''));
      if (control instanceof HTMLSelectElement && text !== '' && !hasOption(control, text))
        control.append(el('option', { value: text }, text));
      control.value = text;
    }
  }

  /** The model select offers the pasted config's model while there is one. */
  private syncPastedModel(): void {
    const select = this.inputs.get('model') as HTMLSelectElement;
    const existing = Array.from(select.options).find((o) => o.value === PASTED_MODEL);
    const text = this.extras.configModel();
    if (text === null) {
      if (existing) {
        if (select.value === PASTED_MODEL) select.value = DEFAULTS.model;
        existing.remove();
      }
      return;
    }
    const option = existing ?? el('option', { value: PASTED_MODEL });
    option.textContent = `Pasted config: ${text}`;
    if (!existing) select.prepend(option);
  }

  private dropExtras(): void {
    this.extras.set({});
    this.syncPastedModel();
    this.host.publish(this.settings());
  }

  private settings(): Scenario {
    const values: Record<string, string> = {};
    for (const [key, control] of this.inputs) values[key] = control.value;
    return planRequest(values, this.extras.values());
  }

  // ---------------------------------------------------------------------------------------------
  // Configs in

  /**
   * Reads a pasted training config through /api/plan ("from"), fills the inputs with what it set
   * and searches as usual.
   */
  private async readPaste(text: string, format: string): Promise<ReadOutcome> {
    // A config without a GPU count or global batch (an argument list, a recipe) searches with
    // the form's, and says so.
    const body = importBody(text, format);
    const assumed: string[] = [];
    let outcome = await this.reads.run((signal) => api.plan<PlanAnswer>(body, signal));
    for (let tries = 0; tries < 2 && outcome.current && !outcome.value.ok; tries++) {
      const key = missingRequired(outcome.value.error);
      const value = key === null ? '' : this.inputs.get(key)!.value.trim();
      if (key === null || value === '') break;
      body[key] = planSettings({ [key]: value })[key];
      assumed.push(`${key} ${value}`);
      outcome = await this.reads.run((signal) => api.plan<PlanAnswer>(body, signal));
    }
    if (!outcome.current) return { cancelled: true };
    const result = outcome.value;
    if (!result.ok) return { error: result.error };
    const imported = result.value.imported;
    if (!imported) throw new TransportError('the server did not say what it read (no "imported")');
    this.load({ ...imported.settings, ...assumedSettings(body) }, false);
    const { extras } = planFromSettings(imported.settings, false);
    const unshown = Object.entries(extras).filter(([key]) => key !== 'model_config');
    this.report.show(imported, unshown, 'no input for it here: sent with every search');
    void this.run();
    const note = assumed.length
      ? ` Not in the config, kept from the form: ${assumed.join(', ')}.`
      : '';
    return { summary: importSummary(imported) + note };
  }

  // ---------------------------------------------------------------------------------------------
  // Searching

  private async run(): Promise<void> {
    const settings = this.settings();
    this.host.publish(settings);
    this.showError(null);
    this.exporter.clear();
    this.shownSearch = null;
    this.searching(true);
    let outcome;
    try {
      // The chart's points come with the answer; the link and "Copy as" keep the user's settings.
      const body = { ...settings, space: SPACE_POINTS };
      outcome = await this.requests.run((signal) => api.plan<PlanAnswer>(body, signal));
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
    this.shownSearch = settings;
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

/** The settings sent beside a pasted text (those the form supplied). */
function assumedSettings(body: Scenario): Scenario {
  const { from: _from, from_format: _format, from_files: _files, ...rest } = body;
  return rest;
}

function hasOption(select: HTMLSelectElement, value: string): boolean {
  return Array.from(select.options).some((o) => o.value === value);
}
