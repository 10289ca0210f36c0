// The "what fits" view (docs/fit.md): a question, a model, a GPU and a layout in; the largest
// micro-batch, sequence length or global batch that fits, or the smallest GPU count with a
// layout that fits, out (POST /api/fit, the same search as `vramplan fit`). The answer shows the
// peak at it, the first value that does not fit and by how much, and why; its scenario opens in
// the training view.

import { el, replace } from '../../dom';
import { LatestOnly } from '../../live';
import { scenarioToQuery } from '../../scenario';
import type { Scenario } from '../../types';
import type { View, ViewHost } from '../view';
import {
  FIELDS,
  QUESTIONS,
  fitBody,
  gib,
  headline,
  missText,
  postFit,
  searchedKey,
  type FitAnswer,
  type FitResult,
} from './fit_data';

export const fitView: View = {
  id: 'fit',
  title: 'What fits',
  // A shared link's values stay text: the core reads "8" as it reads 8.
  options: () => [],
  mount(container, host) {
    new FitPage(container, host);
  },
};

const DEFAULTS: Record<string, string> = {
  question: 'micro_batch',
  model: 'Llama-3.1-8B',
  gpu: 'h100-80gb',
  seq_len: '4096',
  dp: '8',
};

/** The inputs that always hold a value: a link without them gets the default. */
const REQUIRED = new Set(['question', 'model', 'gpu']);

function hasOption(select: HTMLSelectElement, value: string): boolean {
  return Array.from(select.options).some((o) => o.value === value);
}

class FitPage {
  private readonly inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
  private readonly answer = el('div', { id: 'fit-answer' });
  private readonly status = el('p', { class: 'status', id: 'fit-status', 'aria-live': 'polite' });
  private readonly error = el('p', {
    class: 'field-error form-error',
    id: 'fit-error',
    role: 'alert',
    hidden: true,
  });
  private readonly results = el('section', { id: 'fit-results', class: 'outputs' });
  private readonly requests = new LatestOnly<FitResult>();

  constructor(
    container: HTMLElement,
    private readonly host: ViewHost,
  ) {
    const question = this.select(
      'question',
      QUESTIONS.map((q) => [q.value, q.label]),
    );
    question.addEventListener('change', () => this.syncSearched());
    const model = this.select(
      'model',
      host.data.presets.map((p) => [p.name, p.name]),
    );
    const gpu = this.select(
      'gpu',
      host.data.gpus.map((g) => [g.id, g.name]),
    );
    const form = el(
      'form',
      { class: 'fit-form', 'aria-label': 'What fits inputs', novalidate: true },
      el(
        'fieldset',
        {},
        el('legend', { class: 'subgroup' }, 'Question'),
        el(
          'div',
          { class: 'fields' },
          this.wrap('question', 'Find', question, 'what to search for'),
          this.wrap('model', 'Model', model, 'a preset'),
          this.wrap('gpu', 'GPU', gpu, 'its usable memory is the capacity'),
        ),
      ),
      el(
        'fieldset',
        {},
        el('legend', { class: 'subgroup' }, 'Training and layout'),
        el(
          'div',
          { class: 'fields' },
          FIELDS.map((f) => this.field(f.key, f.label, f.help, f.choices)),
        ),
      ),
      this.error,
      el('div', { class: 'toolbar' }, el('button', { type: 'submit', id: 'fit-run' }, 'Find')),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.run();
    });
    this.results.append(this.status, this.answer);
    replace(
      container,
      el(
        'div',
        { class: 'training-view fit-view' },
        el('aside', { class: 'inputs', 'aria-label': 'Inputs' }, el('h2', {}, 'What fits'), form),
        this.results,
      ),
    );
    this.load(host.initial);
    void this.run();
  }

  private select(key: string, choices: [string, string][], empty?: string): HTMLSelectElement {
    return el(
      'select',
      { id: `fit-${key}`, name: key },
      empty === undefined ? null : el('option', { value: '' }, empty),
      choices.map(([value, text]) => el('option', { value }, text)),
    );
  }

  private field(key: string, label: string, help: string, choices?: string[]): HTMLElement {
    const control = choices
      ? this.select(
          key,
          choices.map((c) => [c, c]),
          'default',
        )
      : el('input', {
          id: `fit-${key}`,
          name: key,
          type: 'text',
          inputmode: 'decimal',
          autocomplete: 'off',
          placeholder: 'default',
        });
    return this.wrap(key, label, control, help);
  }

  private wrap(
    key: string,
    label: string,
    control: HTMLInputElement | HTMLSelectElement,
    help: string,
  ): HTMLElement {
    const id = `fit-${key}`;
    control.setAttribute('aria-describedby', `${id}-help`);
    this.inputs.set(key, control);
    return el(
      'div',
      { class: 'field' },
      el('label', { for: id }, label),
      control,
      el('small', { class: 'help', id: `${id}-help` }, help),
    );
  }

  /** A shared link's settings (the question, model and GPU defaulted), else the defaults. */
  private load(initial: Scenario): void {
    const given = Object.keys(initial).length > 0;
    for (const [key, input] of this.inputs) {
      const value = given ? initial[key] : DEFAULTS[key];
      const text =
        value === undefined || value === null
          ? REQUIRED.has(key)
            ? DEFAULTS[key]
            : ''
          : String(value);
      if (input instanceof HTMLSelectElement && text !== '' && !hasOption(input, text))
        input.append(el('option', { value: text }, text));
      input.value = text;
    }
    this.syncSearched();
  }

  /** The input of the value searched is not sent: it is disabled while that question is asked. */
  private syncSearched(): void {
    const searched = searchedKey(this.inputs.get('question')!.value);
    for (const [key, input] of this.inputs) input.disabled = key === searched;
    this.inputs.get('seq_multiple')!.disabled = this.inputs.get('question')!.value !== 'seq_len';
  }

  private values(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, input] of this.inputs) out[key] = input.value;
    return out;
  }

  private async run(): Promise<void> {
    const body = fitBody(this.values());
    this.host.publish(body);
    this.results.setAttribute('aria-busy', 'true');
    this.status.textContent = 'Searching…';
    let outcome;
    try {
      outcome = await this.requests.run((signal) => postFit(body, signal));
    } catch (error) {
      this.showError(`Could not reach the vramplan server: ${String(error)}`);
      this.results.removeAttribute('aria-busy');
      return;
    }
    if (!outcome.current) return;
    this.results.removeAttribute('aria-busy');
    if (!outcome.value.ok) {
      this.showError(outcome.value.error.message);
      this.status.textContent = 'No answer: fix the input named above.';
      replace(this.answer);
      return;
    }
    this.error.hidden = true;
    const a = outcome.value.value;
    this.status.textContent = `${a.evaluated} ${a.question === 'gpus' ? 'planner searches' : 'estimates'} in ${(a.seconds * 1000).toFixed(1)} ms`;
    this.show(a);
  }

  private showError(message: string): void {
    this.error.textContent = message;
    this.error.hidden = false;
  }

  private show(a: FitAnswer): void {
    const miss = missText(a);
    replace(
      this.answer,
      el(
        'h3',
        { id: 'fit-headline', 'data-value': a.value === null ? '' : String(a.value) },
        headline(a),
      ),
      el(
        'dl',
        { class: 'fit-details' },
        el('dt', {}, 'Limit'),
        el(
          'dd',
          { id: 'fit-limit' },
          `${gib(a.limit_bytes)} per GPU (${a.gpu.name}, ${gib(a.gpu.usable_bytes)} usable less ${(a.headroom * 100).toFixed(0)}% headroom)`,
        ),
        a.at
          ? [
              el('dt', {}, 'Peak at the answer'),
              el(
                'dd',
                { id: 'fit-peak', 'data-bytes': String(a.at.device_bytes) },
                `${gib(a.at.device_bytes)} on ${a.at.peak_stage}`,
              ),
            ]
          : [],
        miss && a.next
          ? [
              el('dt', {}, 'Next'),
              el('dd', { id: 'fit-next', 'data-bytes': String(a.next.device_bytes) }, miss),
            ]
          : [],
        el('dt', {}, 'Why'),
        el('dd', { id: 'fit-why' }, a.limiting),
        a.note ? [el('dt', {}, 'Note'), el('dd', { id: 'fit-note' }, a.note)] : [],
      ),
      a.counts && a.counts.length ? this.counts(a) : [],
      a.scenario
        ? el(
            'p',
            {},
            el(
              'a',
              {
                href: `${window.location.pathname}${scenarioToQuery(a.scenario, 'training')}`,
                id: 'fit-open-estimate',
              },
              'open the answer in the estimate view',
            ),
          )
        : [],
    );
  }

  private counts(a: FitAnswer): HTMLElement {
    return el(
      'table',
      { id: 'fit-counts', class: 'data' },
      el('caption', {}, 'GPU counts tried'),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', { scope: 'col' }, 'GPUs'),
          el('th', { scope: 'col' }, 'fits'),
          el('th', { scope: 'col' }, 'peak'),
          el('th', { scope: 'col' }, 'layout'),
        ),
      ),
      el(
        'tbody',
        {},
        (a.counts ?? []).map((c) =>
          el(
            'tr',
            {},
            el('td', { class: 'num' }, String(c.gpus)),
            el('td', {}, c.fits ? 'yes' : 'no'),
            el('td', { class: 'num' }, c.device_bytes > 0 ? gib(c.device_bytes) : '–'),
            el('td', {}, c.reason || c.layout),
          ),
        ),
      ),
    );
  }
}
