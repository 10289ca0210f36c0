// The quick view (docs/quick.md): a parameter count, layers and hidden size in; the coarse rows
// of `vramplan quick` out, each with its formula and source, beside the full estimate of the
// matching architecture (POST /api/quick, the same JSON as the CLI). The inputs come from
// GET /api/quick/options, so the form offers exactly the core's settings and examples.

import { el, replace } from '../../dom';
import { debounce, LatestOnly } from '../../live';
import type { OptionSpec, Scenario } from '../../types';
import type { View, ViewHost } from '../view';
import {
  MAIN_KEYS,
  exampleValues,
  quickApi,
  quickBody,
  type QuickOptions,
  type QuickResult,
} from './quick_data';
import { renderQuick } from './results';

export const quickView: View = {
  id: 'quick',
  title: 'Quick',
  // A shared link's values stay text: the core reads "8" as it reads 8.
  options: () => [],
  mount(container, host) {
    void QuickPage.open(container, host);
  },
};

const DEFAULT_EXAMPLE = 'medium-training';

class QuickPage {
  private readonly inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
  private readonly example: HTMLSelectElement;
  private readonly results = el('section', {
    id: 'results',
    class: 'outputs',
    'aria-live': 'polite',
  });
  private readonly answer = el('div', { id: 'quick-answer' });
  private readonly error = el('p', {
    class: 'field-error form-error',
    id: 'quick-error',
    role: 'alert',
    hidden: true,
  });
  private readonly requests = new LatestOnly<QuickResult>();
  private readonly schedule = debounce(() => void this.run(), 250);

  static async open(container: HTMLElement, host: ViewHost): Promise<void> {
    let options: QuickOptions;
    try {
      options = await quickApi.options();
    } catch (error) {
      replace(
        container,
        el(
          'p',
          { class: 'field-error', role: 'alert' },
          `Could not load /api/quick/options: ${String(error)}`,
        ),
      );
      return;
    }
    new QuickPage(container, host, options);
  }

  private constructor(
    container: HTMLElement,
    private readonly host: ViewHost,
    private readonly data: QuickOptions,
  ) {
    this.example = el(
      'select',
      { id: 'f-example', name: 'example' },
      el('option', { value: '' }, '(none)'),
      data.examples.map((e) =>
        el(
          'option',
          { value: e.name },
          `${e.title} (calculator: ${e.calculator_gib.toFixed(2)} GiB)`,
        ),
      ),
    );
    this.example.addEventListener('change', () => this.pickExample());
    const fields = data.options.filter((o) => o.key !== 'example');
    const ordered = [
      ...MAIN_KEYS.map((k) => fields.find((o) => o.key === k)).filter((o): o is OptionSpec => !!o),
      ...fields.filter((o) => !MAIN_KEYS.includes(o.key)),
    ];
    const form = el(
      'form',
      { class: 'quick-form', 'aria-label': 'Quick calculator inputs', novalidate: true },
      el(
        'div',
        { class: 'field wide' },
        el('label', { for: 'f-example' }, 'Example'),
        this.example,
        el('small', { class: 'help' }, 'A shipped scenario; the inputs below override it.'),
      ),
      el(
        'fieldset',
        {},
        el('legend', { class: 'subgroup' }, 'Inputs'),
        el(
          'div',
          { class: 'fields' },
          ordered.map((o) => this.field(o)),
        ),
      ),
      this.error,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.schedule.flush();
    });
    this.results.append(this.answer);
    replace(
      container,
      el(
        'div',
        { class: 'training-view quick-view' },
        el(
          'aside',
          { class: 'inputs' },
          el('div', { class: 'inputs-head' }, el('h2', {}, 'Quick calculator')),
          form,
        ),
        this.results,
      ),
    );
    this.load(host.initial);
  }

  private field(o: OptionSpec): HTMLElement {
    const id = `f-${o.key}`;
    let input: HTMLInputElement | HTMLSelectElement;
    if (o.kind === 'choice' || o.kind === 'bool') {
      const choices = o.kind === 'bool' ? ['true', 'false'] : o.choices;
      input = el(
        'select',
        { id, name: o.key },
        el('option', { value: '' }, `default (${o.default})`),
        choices.map((c) => el('option', { value: c }, c)),
      );
    } else {
      input = el('input', {
        id,
        name: o.key,
        type: 'text',
        inputmode: o.kind === 'text' ? 'text' : 'decimal',
        placeholder: o.default,
        autocomplete: 'off',
      });
    }
    input.addEventListener('input', () => this.changed());
    input.addEventListener('change', () => this.changed());
    this.inputs.set(o.key, input);
    return el(
      'div',
      { class: 'field' },
      el('label', { for: id }, o.key.replace(/_/g, ' ')),
      input,
      el('small', { class: 'help' }, `${o.flag ?? ''}: ${o.help}`),
    );
  }

  /** A shared link's settings, else the default example. */
  private load(initial: Scenario): void {
    const given = Object.keys(initial).length > 0;
    const example = given ? String(initial.example ?? '') : DEFAULT_EXAMPLE;
    this.example.value = example;
    const values = exampleValues(this.data.examples.find((e) => e.name === example));
    if (given)
      for (const [k, v] of Object.entries(initial)) if (k !== 'example') values[k] = String(v);
    this.fill(values);
    void this.run();
  }

  private pickExample(): void {
    this.fill(exampleValues(this.data.examples.find((e) => e.name === this.example.value)));
    this.changed();
  }

  private fill(values: Record<string, string>): void {
    for (const [key, input] of this.inputs) input.value = values[key] ?? '';
  }

  private values(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, input] of this.inputs) out[key] = input.value;
    return out;
  }

  private changed(): void {
    this.results.classList.add('pending');
    this.results.setAttribute('aria-busy', 'true');
    this.schedule();
  }

  private async run(): Promise<void> {
    const body = quickBody(this.example.value, this.values());
    this.host.publish(body);
    this.results.classList.add('pending');
    this.results.setAttribute('aria-busy', 'true');
    let outcome;
    try {
      outcome = await this.requests.run((signal) => quickApi.run(body, signal));
    } catch (error) {
      this.showError(`Could not reach the vramplan server: ${String(error)}`);
      return this.done();
    }
    if (!outcome.current) return;
    if (outcome.value.ok) {
      this.error.hidden = true;
      renderQuick(this.answer, outcome.value.value);
    } else {
      this.showError(outcome.value.error.message);
    }
    this.done();
  }

  private showError(message: string): void {
    this.error.textContent = message;
    this.error.hidden = false;
  }

  private done(): void {
    if (this.schedule.pending()) return;
    this.results.classList.remove('pending');
    this.results.removeAttribute('aria-busy');
  }
}
