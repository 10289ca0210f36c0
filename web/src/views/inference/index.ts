// The inference view: serving memory per GPU (`vramplan infer`). The scenario form on one side,
// the live answer on the other; every change re-estimates after a short pause and only the
// newest answer is shown, as in the training view.

import { TransportError, api, type ApiResult } from '../../api';
import { download, el, replace } from '../../dom';
import { estimateToJson, exportName, inferenceToCsv } from '../../export';
import { ScenarioForm } from '../../form';
import { LatestOnly, debounce } from '../../live';
import { toText } from '../../scenario';
import type { ApiError, InferenceEstimate, Scenario } from '../../types';
import type { View, ViewHost } from '../view';
import { INFERENCE_LAYOUT, inferenceLabel } from './labels';
import { InferenceResults } from './results';

const DEFAULT_SCENARIO: Scenario = { model: 'Llama-3.1-8B', gpu_memory_utilization: 0.9 };
const TYPING_PAUSE_MS = 150;
const NAME_KEYS = ['tp', 'pp', 'ep', 'dp', 'context', 'batch', 'kv_dtype', 'weight_dtype'];

export const inferenceView: View = {
  id: 'inference',
  title: 'Inference',
  options: (data) => data.inferOptions,
  mount(container, host) {
    new InferencePage(container, host);
  },
};

class InferencePage {
  private readonly form: ScenarioForm;
  private readonly results = new InferenceResults();
  private readonly requests = new LatestOnly<ApiResult<InferenceEstimate>>();
  private readonly scheduleEstimate = debounce(() => void this.estimate(), TYPING_PAUSE_MS);
  private readonly announcer: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly shareBox: HTMLElement;
  /** The scenario the shown answer is for; exports use it, never half-typed inputs. */
  private shownInput: Scenario | null = null;

  constructor(
    container: HTMLElement,
    private readonly host: ViewHost,
  ) {
    this.form = new ScenarioForm(
      {
        options: host.data.inferOptions,
        presets: host.data.presets,
        gpus: host.data.gpus,
        layout: INFERENCE_LAYOUT,
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
        { class: 'training-view inference-view' },
        el(
          'aside',
          { class: 'inputs', 'aria-label': 'Inputs' },
          el(
            'div',
            { class: 'inputs-head' },
            el('h2', {}, 'Serving scenario'),
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
      button('Print report', () => window.print(), 'print-report'),
    );
  }

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
      outcome = await this.requests.run((signal) => api.infer(scenario, signal));
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      this.shownInput = null;
      this.form.showError(null);
      this.results.showInvalid(null, `No answer from the server: ${error.message}`);
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
  }

  private showError(error: ApiError): void {
    this.shownInput = null;
    this.form.showError(error);
    const where = this.form.errorTarget(error);
    const place =
      where === 'form' ? 'at the top of the inputs' : `beside “${inferenceLabel(where)}”`;
    this.results.showInvalid(error, `Fix the input ${place} to see results.`);
    this.announcer.textContent = error.message;
  }

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
    const name = exportName(this.shownInput, 'csv', 'vramplan-infer', NAME_KEYS);
    download(name, 'text/csv', inferenceToCsv(estimate));
  }

  private exportJson(): void {
    const estimate = this.results.current();
    if (!estimate || !this.shownInput) return this.nothingToExport();
    const name = exportName(this.shownInput, 'json', 'vramplan-infer', NAME_KEYS);
    download(name, 'application/json', estimateToJson(this.shownInput, estimate));
  }

  private nothingToExport(): void {
    this.announcer.textContent = 'Nothing to export: the inputs have no valid estimate yet.';
  }

  /** The inputs as a short list, for the printed report (the form itself is not printed). */
  private renderSummary(input: Scenario, estimate: InferenceEstimate): void {
    const resolved = estimate.scenario as Record<string, unknown>;
    const model = (resolved.model as Record<string, unknown> | undefined)?.name ?? 'custom';
    const shown = ['tp', 'pp', 'ep', 'dp', 'context', 'batch', 'kv_dtype', 'engine'];
    const items = shown
      .filter((key) => resolved[key] !== undefined && resolved[key] !== null)
      .map((key) =>
        el('li', {}, `${inferenceLabel(key)}: `, el('strong', {}, toText(resolved[key]))),
      );
    const changed = Object.entries(input)
      .filter(([key]) => key !== 'model' && key !== 'model_config')
      .map(([key, value]) => `${key}=${toText(value)}`);
    replace(
      this.summary,
      el('h2', {}, `vramplan serving: ${toText(model)}`),
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
