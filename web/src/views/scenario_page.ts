// The page the training and inference views share: the scenario form on one side, the live
// answer on the other. Every change re-estimates after a short pause and only the newest answer
// is shown; the toolbar shares a link, exports the shown answer and prints a report. A pasted
// config or command fills the form (and its understood and ignored keys are listed); the shown
// run can be written back as a framework's config. A view differs only in what its spec says: the
// request, the results panel, the exports, the formats and the summary.

import { TransportError, api, type ApiResult } from '../api';
import { download, el, replace } from '../dom';
import { estimateToJson } from '../export';
import { ConfigExport } from '../form/config_export';
import {
  emitBody,
  importBody,
  importSummary,
  splitImported,
  type FormatLists,
  type ImportedConfig,
} from '../form/config_io';
import { ImportReport } from '../form/import_report';
import type { FormLayout } from '../form/layout';
import { PasteBox, type ReadOutcome } from '../form/paste_box';
import { ScenarioForm } from '../form/scenario_form';
import { LatestOnly, debounce } from '../live';
import { toText } from '../scenario';
import type { ApiError, Fit, OptionSpec, Scenario } from '../types';
import type { ViewHost } from './view';

const TYPING_PAUSE_MS = 150;

/** What the page reads of an answer: the resolved scenario and the GPU fits (first = chosen). */
export interface Answer {
  scenario: Record<string, unknown>;
  fit: Fit[];
  /** What a pasted config set, when the request had one ("from"). */
  imported?: ImportedConfig;
}

/** The panel that shows a view's answers. */
export interface AnswerPanel<A> {
  readonly element: HTMLElement;
  /** The answer in one line, fixed at the bottom of phone screens. */
  readonly mini: HTMLElement;
  setPending(): void;
  showInvalid(error: ApiError | null, note: string): void;
  show(answer: A): void;
  current(): A | null;
}

export interface ScenarioPageSpec<A extends Answer> {
  /** The view's id: element ids of the paste box and the config export start with it. */
  viewId: string;
  /** Classes of the page's root element. */
  pageClass: string;
  /** Heading above the form. */
  heading: string;
  options: OptionSpec[];
  layout: FormLayout;
  /** Loaded when the page was not opened from a shared link. */
  defaultScenario: Scenario;
  results: AnswerPanel<A>;
  /** Shown below the results (the training view's sweep). */
  extraOutputs?: HTMLElement[];
  request: (scenario: Scenario, signal: AbortSignal) => Promise<ApiResult<A>>;
  /** The endpoint `request` posts to: "emit" goes there too. */
  endpoint: '/api/estimate' | '/api/infer';
  /** The configs the endpoint reads and writes (GET /api/options or /api/infer/options). */
  formats: FormatLists;
  /** What the paste box invites. */
  pastePlaceholder: string;
  /** The heading and hint of the "Copy as" card. */
  exportTitle: string;
  exportHint: string;
  /** The name of an exported file. */
  fileName: (input: Scenario, extension: string) => string;
  toCsv: (answer: A) => string;
  /** The printed report's title and the resolved values it lists (unset ones left out). */
  summary: (input: Scenario, answer: A) => { title: string; values: [string, unknown][] };
  /** After an answer is shown. */
  onAnswer?: (input: Scenario, answer: A) => void;
  /** When no answer can be shown: the server did not answer, or the inputs are invalid. */
  onNoAnswer?: (reason: 'no-server' | 'invalid') => void;
}

export class ScenarioPage<A extends Answer> {
  private readonly form: ScenarioForm;
  private readonly results: AnswerPanel<A>;
  private readonly requests = new LatestOnly<ApiResult<A>>();
  private readonly reads = new LatestOnly<ApiResult<A>>();
  private readonly paste: PasteBox;
  private readonly report: ImportReport;
  private readonly exporter: ConfigExport;
  private readonly scheduleEstimate = debounce(() => void this.estimate(), TYPING_PAUSE_MS);
  private readonly announcer: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly shareBox: HTMLElement;
  /** The scenario the shown answer is for; exports use it, never half-typed inputs. */
  private shownInput: Scenario | null = null;

  constructor(
    container: HTMLElement,
    private readonly host: ViewHost,
    private readonly spec: ScenarioPageSpec<A>,
  ) {
    this.results = spec.results;
    this.form = new ScenarioForm(
      {
        options: spec.options,
        presets: host.data.presets,
        gpus: host.data.gpus,
        layout: spec.layout,
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
    this.report = new ImportReport(`${spec.viewId}-import-report`);
    this.paste = new PasteBox({
      view: spec.viewId,
      formats: spec.formats.from,
      placeholder: spec.pastePlaceholder,
      reportId: this.report.element.id,
      read: (text, format) => this.readPaste(text, format),
    });
    this.exporter = new ConfigExport({
      id: `${spec.viewId}-emit`,
      title: spec.exportTitle,
      hint: spec.exportHint,
      formats: spec.formats.emit,
      request: (format) =>
        this.shownInput ? api.emit(spec.endpoint, emitBody(this.shownInput, format)) : null,
      model: () => this.shownInput?.model,
    });
    replace(
      container,
      el(
        'div',
        { class: spec.pageClass },
        el(
          'aside',
          { class: 'inputs', 'aria-label': 'Inputs' },
          el(
            'div',
            { class: 'inputs-head' },
            el('h2', {}, spec.heading),
            el(
              'button',
              { type: 'button', class: 'secondary', onclick: () => this.resetAll() },
              'Reset inputs',
            ),
          ),
          this.paste.element,
          this.form.element,
        ),
        el(
          'div',
          { class: 'outputs' },
          this.toolbar(),
          this.shareBox,
          this.report.element,
          this.summary,
          this.results.element,
          this.exporter.element,
          spec.extraOutputs ?? [],
          this.announcer,
        ),
        this.results.mini,
      ),
    );
    this.form.load(Object.keys(host.initial).length ? host.initial : spec.defaultScenario);
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

  // ---------------------------------------------------------------------------------------------
  // Live estimate

  private changed(): void {
    const { scenario, localError } = this.form.state();
    this.host.publish(scenario);
    this.shareBox.hidden = true;
    this.exporter.clear();
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
      outcome = await this.requests.run((signal) => this.spec.request(scenario, signal));
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      this.shownInput = null;
      this.form.showError(null);
      this.results.showInvalid(null, `No answer from the server: ${error.message}`);
      this.spec.onNoAnswer?.('no-server');
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
    this.spec.onAnswer?.(scenario, result.value);
  }

  private showError(error: ApiError): void {
    this.shownInput = null;
    this.form.showError(error);
    const where = this.form.errorTarget(error);
    const place =
      where === 'form'
        ? 'at the top of the inputs'
        : `beside “${this.spec.layout.labelFor(where)}”`;
    this.results.showInvalid(error, `Fix the input ${place} to see results.`);
    this.spec.onNoAnswer?.('invalid');
    this.announcer.textContent = error.message;
  }

  // ---------------------------------------------------------------------------------------------
  // Configs in

  /**
   * Reads a pasted config or command through the view's endpoint ("from"), then fills the form
   * with what it set (every other input back to its default) and estimates that as usual.
   */
  private async readPaste(text: string, format: string): Promise<ReadOutcome> {
    const outcome = await this.reads.run((signal) =>
      this.spec.request(importBody(text, format), signal),
    );
    if (!outcome.current) return { cancelled: true };
    const result = outcome.value;
    if (!result.ok) return { error: result.error };
    const imported = result.value.imported;
    if (!imported) throw new TransportError('the server did not say what it read (no "imported")');
    const { shown, unshown } = splitImported(imported.settings, this.form.keys());
    this.form.load(shown);
    this.report.show(imported, unshown, 'no input for it in this view: not used');
    this.changed();
    return { summary: importSummary(imported) };
  }

  private resetAll(): void {
    this.report.clear();
    this.form.resetAll();
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
    const answer = this.results.current();
    if (!answer || !this.shownInput) return this.nothingToExport();
    download(this.spec.fileName(this.shownInput, 'csv'), 'text/csv', this.spec.toCsv(answer));
  }

  private exportJson(): void {
    const answer = this.results.current();
    if (!answer || !this.shownInput) return this.nothingToExport();
    download(
      this.spec.fileName(this.shownInput, 'json'),
      'application/json',
      estimateToJson(this.shownInput, answer),
    );
  }

  private nothingToExport(): void {
    this.announcer.textContent = 'Nothing to export: the inputs have no valid estimate yet.';
  }

  /** The inputs as a short list, for the printed report (the form itself is not printed). */
  private renderSummary(input: Scenario, answer: A): void {
    const { title, values } = this.spec.summary(input, answer);
    const items = values.map(([key, value]) =>
      el('li', {}, `${this.spec.layout.labelFor(key)}: `, el('strong', {}, toText(value))),
    );
    const changed = Object.entries(input)
      .filter(([key]) => key !== 'model' && key !== 'model_config')
      .map(([key, value]) => `${key}=${toText(value)}`);
    replace(
      this.summary,
      el('h2', {}, title),
      el(
        'p',
        {},
        `GPU: ${answer.fit[0]?.name ?? answer.fit[0]?.gpu ?? ''}. Link: `,
        el('span', { class: 'url' }, window.location.href),
      ),
      el('ul', { class: 'summary-list' }, items),
      changed.length ? el('p', {}, 'Inputs set: ', el('code', {}, changed.join(' '))) : null,
    );
  }
}
