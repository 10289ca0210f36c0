// The roofline view: the training scenario and the cluster in; the step time and its parts, the
// roofline chart and every operation's FLOPs, bytes, intensity and bound out (POST /api/roofline,
// exactly `vramplan roofline --format json`). Every change asks again after a short pause and only
// the newest answer is shown, as on the training page.

import '../../styles/roofline.css';
import { TransportError, api, type ApiResult } from '../../api';
import { download, el, replace } from '../../dom';
import { ScenarioForm } from '../../form/scenario_form';
import { LatestOnly, debounce } from '../../live';
import type { ApiError, Scenario } from '../../types';
import type { View, ViewHost } from '../view';
import { ROOFLINE_LAYOUT, rooflineOptions } from './layout';
import { RooflineResults } from './results';
import type { RooflineAnswer } from './roofline_data';

const TYPING_PAUSE_MS = 150;
const DEFAULT_SCENARIO: Scenario = { model: 'Llama-3.1-8B', gpus: 8, global_batch: 64 };

export const rooflineView: View = {
  id: 'roofline',
  title: 'Roofline',
  options: (data) => rooflineOptions(data.options),
  mount(container, host) {
    new RooflinePage(container, host);
  },
};

class RooflinePage {
  private readonly form: ScenarioForm;
  private readonly results = new RooflineResults();
  private readonly requests = new LatestOnly<ApiResult<RooflineAnswer>>();
  private readonly schedule = debounce(() => void this.ask(), TYPING_PAUSE_MS);
  private readonly announcer = el('div', {
    class: 'sr-only',
    'aria-live': 'assertive',
    id: 'error-announcer',
  });
  private shownInput: Scenario | null = null;

  constructor(
    container: HTMLElement,
    private readonly host: ViewHost,
  ) {
    this.form = new ScenarioForm(
      {
        options: rooflineOptions(host.data.options),
        presets: host.data.presets,
        gpus: host.data.gpus,
        layout: ROOFLINE_LAYOUT,
        loadPresetConfig: (name) => api.modelConfig(name),
        fetchHub: (id) => api.hubModel(id),
      },
      () => this.changed(),
    );
    const button = (text: string, id: string, onclick: () => void) =>
      el('button', { type: 'button', id, onclick }, text);
    replace(
      container,
      el(
        'div',
        { class: 'training-view roofline-view' },
        el(
          'aside',
          { class: 'inputs', 'aria-label': 'Inputs' },
          el(
            'div',
            { class: 'inputs-head' },
            el('h2', {}, 'Scenario and cluster'),
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
          el(
            'div',
            { class: 'toolbar no-print', role: 'toolbar', 'aria-label': 'Share and export' },
            button('Copy link', 'share-link', () => void this.share()),
            button('Export JSON', 'export-json', () => this.exportJson()),
          ),
          this.results.element,
          this.announcer,
        ),
      ),
    );
    this.form.load(Object.keys(host.initial).length ? host.initial : DEFAULT_SCENARIO);
    this.changed();
  }

  private changed(): void {
    const { scenario, localError } = this.form.state();
    this.host.publish(scenario);
    this.requests.cancel();
    if (localError) {
      this.showError(localError);
      return;
    }
    this.results.setPending();
    this.schedule();
  }

  private async ask(): Promise<void> {
    const { scenario, localError } = this.form.state();
    if (localError) return;
    let outcome;
    try {
      outcome = await this.requests.run((signal) => api.roofline<RooflineAnswer>(scenario, signal));
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
    this.form.setResolved(result.value);
    this.results.show(result.value);
  }

  private showError(error: ApiError): void {
    this.shownInput = null;
    this.form.showError(error);
    const where = this.form.errorTarget(error);
    const place =
      where === 'form' ? 'at the top of the inputs' : `beside “${ROOFLINE_LAYOUT.labelFor(where)}”`;
    this.results.showInvalid(error, `Fix the input ${place} to see results.`);
    this.announcer.textContent = error.message;
  }

  private async share(): Promise<void> {
    try {
      await navigator.clipboard.writeText(window.location.href);
      this.announcer.textContent = 'Link copied to the clipboard.';
    } catch {
      this.announcer.textContent = `Copy this link: ${window.location.href}`;
    }
  }

  private exportJson(): void {
    const answer = this.results.current();
    if (!answer || !this.shownInput) {
      this.announcer.textContent = 'Nothing to export: the inputs have no valid answer yet.';
      return;
    }
    const model = String(this.shownInput.model ?? 'custom').replace(/[^A-Za-z0-9._-]+/g, '_');
    download(
      `vramplan-roofline-${model}.json`,
      'application/json',
      `${JSON.stringify({ input: this.shownInput, roofline: answer }, null, 2)}\n`,
    );
  }
}
