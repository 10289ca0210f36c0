// The training view: the scenario form on one side, the live estimate, sweep and exports on the
// other. Every change re-estimates after a short pause; only the newest answer is shown.

import { TransportError, api, type ApiResult } from '../../api';
import { download, el, replace } from '../../dom';
import { estimateToCsv, estimateToJson, exportName } from '../../export';
import { LatestOnly, debounce } from '../../live';
import { resolvedValue, toText } from '../../scenario';
import type { ApiError, Estimate, Scenario } from '../../types';
import type { View, ViewHost } from '../view';
import { ScenarioForm } from '../../form';
import { TRAINING_LAYOUT, labelFor } from './labels';
import { ResultsPanel } from './results';
import { SweepPanel } from './sweep';

const DEFAULT_SCENARIO: Scenario = { model: 'Llama-3.1-8B' };
const TYPING_PAUSE_MS = 150;

export const trainingView: View = {
  id: 'training',
  title: 'Training',
  options: (data) => data.options,
  mount(container, host) {
    new TrainingPage(container, host);
  },
};

class TrainingPage {
  private readonly form: ScenarioForm;
  private readonly results = new ResultsPanel();
  private readonly sweep = new SweepPanel();
  private readonly requests = new LatestOnly<ApiResult<Estimate>>();
  private readonly scheduleEstimate = debounce(() => void this.estimate(), TYPING_PAUSE_MS);
  private readonly announcer: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly shareBox: HTMLElement;
  /** The scenario the shown estimate answers; exports use it, never the half-typed inputs. */
  private shownInput: Scenario | null = null;

  constructor(
    container: HTMLElement,
    private readonly host: ViewHost,
  ) {
    this.form = new ScenarioForm(
      {
        options: host.data.options,
        presets: host.data.presets,
        gpus: host.data.gpus,
        layout: TRAINING_LAYOUT,
        loadPresetConfig: (name) => api.modelConfig(name),
        fetchHub: (id) => api.hubModel(id),
      },
      () => this.changed(),
    );
    this.announcer = el('div', {
      class: 'sr-only',
      'aria-live': 'assertive',
      id: 'error-announcer',
    });
    this.summary = el('section', {
      class: 'scenario-summary print-only',
      'aria-label': 'Scenario',
    });
    this.shareBox = el('div', { class: 'share-box', hidden: true });
    replace(
      container,
      el(
        'div',
        { class: 'training-view' },
        el(
          'aside',
          { class: 'inputs', 'aria-label': 'Inputs' },
          el(
            'div',
            { class: 'inputs-head' },
            el('h2', {}, 'Scenario'),
            el(
              'button',
              { type: 'button', class: 'secondary', onclick: () => this.form.resetAll() },
              'Reset inputs',
            ),
          ),
          this.form.element,
        ),
        el(
          'div',
          { class: 'outputs' },
          this.toolbar(),
          this.shareBox,
          this.summary,
          this.results.element,
          this.sweep.element,
          this.announcer,
        ),
        this.results.mini,
      ),
    );
    this.form.load(Object.keys(host.initial).length ? host.initial : DEFAULT_SCENARIO);
    this.changed();
  }

  private toolbar(): HTMLElement {
    const button = (text: string, onclick: () => void, id: string) =>
      el('button', { type: 'button', id, onclick }, text);
    return el(
      'div',
      { class: 'toolbar no-print', role: 'toolbar', 'aria-label': 'Share and export' },
      button('Copy link', () => void this.share(), 'share-link'),
      button('Export CSV', () => this.exportCsv(), 'export-csv'),
      button('Export JSON', () => this.exportJson(), 'export-json'),
      button('Print report', () => this.print(), 'print-report'),
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Live estimate

  private changed(): void {
    const { scenario, localError } = this.form.state();
    this.host.publish(scenario);
    this.shareBox.hidden = true;
    // An answer still in flight is for the previous inputs: drop it, so that the results stay
    // pending until these inputs are answered.
    this.requests.cancel();
    if (localError) {
      this.showError(localError);
      return;
    }
    this.results.setPending();
    this.scheduleEstimate();
  }

  private async estimate(): Promise<void> {
    const { scenario, localError } = this.form.state();
    if (localError) return;
    let outcome;
    try {
      outcome = await this.requests.run((signal) => api.estimate(scenario, signal));
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      this.shownInput = null;
      this.form.showError(null);
      this.results.showInvalid(null, `No answer from the server: ${error.message}`);
      this.sweep.clear('No answer from the server.');
      return;
    }
    if (!outcome.current) return;
    const result = outcome.value;
    if (!result.ok) {
      this.showError(result.error);
      return;
    }
    this.shownInput = scenario;
    this.form.showError(null);
    this.form.setResolved(result.value.scenario);
    this.results.show(result.value);
    this.renderSummary(scenario, result.value);
    this.sweep.update(scenario, result.value.fit[0] ?? null);
  }

  private showError(error: ApiError): void {
    this.shownInput = null;
    this.form.showError(error);
    const where = this.form.errorTarget(error);
    const place = where === 'form' ? 'at the top of the inputs' : `beside “${labelFor(where)}”`;
    this.results.showInvalid(error, `Fix the input ${place} to see results.`);
    this.sweep.clear('The sweep waits for valid inputs.');
    this.announcer.textContent = error.message;
  }

  // ---------------------------------------------------------------------------------------------
  // Share, export, print

  private async share(): Promise<void> {
    const link = window.location.href;
    const input = el('input', {
      type: 'text',
      readonly: true,
      value: link,
      id: 'share-url',
      'aria-label': 'Link to this scenario',
    });
    let note = 'Link copied to the clipboard.';
    try {
      await navigator.clipboard.writeText(link);
    } catch {
      note = 'Copy this link:';
    }
    replace(this.shareBox, el('p', { role: 'status' }, note), input);
    this.shareBox.hidden = false;
    input.select();
  }

  private exportCsv(): void {
    const estimate = this.results.current();
    if (!estimate || !this.shownInput) return this.nothingToExport();
    download(exportName(this.shownInput, 'csv'), 'text/csv', estimateToCsv(estimate));
  }

  private exportJson(): void {
    const estimate = this.results.current();
    if (!estimate || !this.shownInput) return this.nothingToExport();
    download(
      exportName(this.shownInput, 'json'),
      'application/json',
      estimateToJson(this.shownInput, estimate),
    );
  }

  private nothingToExport(): void {
    this.announcer.textContent = 'Nothing to export: the inputs have no valid estimate yet.';
  }

  private print(): void {
    window.print();
  }

  /** The inputs as a short list, for the printed report (the form itself is not printed). */
  private renderSummary(input: Scenario, estimate: Estimate): void {
    const resolved = estimate.scenario as Record<string, Record<string, unknown>>;
    const model = resolved.model?.name ?? toText(input.model ?? 'custom');
    const shown = [
      'gpus',
      'tp',
      'pp',
      'vpp',
      'dp',
      'cp',
      'ep',
      'seq_len',
      'micro_batch',
      'global_batch',
      'recompute',
      'optimizer',
      'param_dtype',
      'zero',
      'fsdp',
      'distributed_optimizer',
    ];
    const items = shown
      .map((key) => [key, resolvedValue(resolved, key)] as const)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => el('li', {}, `${labelFor(key)}: `, el('strong', {}, toText(value))));
    const changed = Object.entries(input)
      .filter(([key]) => key !== 'model' && key !== 'model_config')
      .map(([key, value]) => `${key}=${toText(value)}`);
    replace(
      this.summary,
      el('h2', {}, `vramplan: ${model}`),
      el(
        'p',
        {},
        `GPU: ${estimate.fit[0]?.name ?? estimate.fit[0]?.gpu ?? ''}. Link: `,
        el('span', { class: 'url' }, window.location.href),
      ),
      el('ul', { class: 'summary-list' }, items),
      changed.length ? el('p', {}, 'Inputs set: ', el('code', {}, changed.join(' '))) : null,
    );
  }
}
