// One option of the scenario form on screen: its label, control (checkbox, select or text input),
// reset button, help (with the CLI flag) and error line. The field shows what it is told; the
// form keeps the values, so a field never decides on its own what the scenario holds.

import { el, replace } from '../dom';
import { toText } from '../scenario';
import type { OptionSpec } from '../types';
import { usesSelect } from './option_choices';

/** What a field reports to its form. */
export interface FieldEvents {
  /** The user typed, ticked or picked `raw` ('' for nothing). */
  input: (raw: string) => void;
  /** The reset button was pressed: back to the default. */
  reset: () => void;
}

export class OptionField {
  readonly element: HTMLElement;
  readonly control: HTMLInputElement | HTMLSelectElement;
  private readonly resetButton: HTMLButtonElement;
  private readonly error: HTMLElement;

  constructor(
    readonly option: OptionSpec,
    /** The section the field is in: opened to show an error. */
    private readonly group: HTMLDetailsElement,
    label: string,
    events: FieldEvents,
  ) {
    const id = `f-${option.key}`;
    this.control = buildControl(option, id, events.input);
    this.control.setAttribute('aria-describedby', `${id}-error ${id}-help`);
    this.control.dataset.key = option.key;
    this.resetButton = el(
      'button',
      {
        type: 'button',
        class: 'reset',
        hidden: true,
        title: 'Back to the default',
        'aria-label': `Reset ${label} to its default`,
        onclick: () => {
          events.reset();
          this.control.focus();
        },
      },
      '↺',
    );
    this.error = el('p', { id: `${id}-error`, class: 'field-error', hidden: true });
    const help = el(
      'small',
      { id: `${id}-help`, class: 'help' },
      option.help,
      option.default ? ` · default ${option.default}` : '',
      ' · ',
      el('code', {}, option.flag ?? `--${option.key.replace(/_/g, '-')}`),
    );
    const isCheck = option.kind === 'bool';
    const labelElement = el('label', { for: id }, label);
    const row = isCheck
      ? el('div', { class: 'control-row check' }, this.control, labelElement, this.resetButton)
      : el('div', { class: 'control-row' }, this.control, this.resetButton);
    this.element = el(
      'div',
      { class: `field${isCheck ? ' field-check' : ''}`, 'data-field': option.key },
      isCheck ? null : labelElement,
      row,
      help,
      this.error,
    );
  }

  /**
   * Shows the user's value (undefined: unset); a select first gets `choices` as its entries.
   * Marks the control as set, and offers the reset button, only when a value is set.
   */
  show(raw: string | undefined, choices: [string, string][]): void {
    const { control } = this;
    this.showResetButton(raw !== undefined);
    if (control instanceof HTMLSelectElement) {
      fillSelect(control, choices);
      control.value = raw ?? '';
    } else if (control.type === 'checkbox') {
      if (raw !== undefined) control.checked = raw === 'true';
    } else {
      control.value = raw ?? '';
    }
    control.classList.toggle('is-set', raw !== undefined);
  }

  showResetButton(visible: boolean): void {
    this.resetButton.hidden = !visible;
  }

  /**
   * Shows what an unset field means: `resolved` is the value the core used (undefined when the
   * answer does not say), else the option's default. A set checkbox keeps the user's tick.
   */
  showDefault(resolved: unknown, isSet: boolean): void {
    const { option, control } = this;
    const shown = resolved !== undefined ? toText(resolved) : option.default;
    if (control instanceof HTMLSelectElement) {
      const first = control.options[0];
      if (first) first.textContent = `default${shown ? ` (${shown})` : ''}`;
    } else if (control.type === 'checkbox') {
      if (!isSet)
        control.checked =
          resolved === true || (resolved === undefined && option.default === 'true');
    } else {
      control.placeholder = shown;
    }
  }

  /** The core's message beside the control (opening its section); null clears it. */
  setError(message: string | null): void {
    this.error.textContent = message ?? '';
    this.error.hidden = !message;
    if (message) {
      this.control.setAttribute('aria-invalid', 'true');
      this.group.open = true;
    } else {
      this.control.removeAttribute('aria-invalid');
    }
  }
}

function buildControl(
  option: OptionSpec,
  id: string,
  input: (raw: string) => void,
): HTMLInputElement | HTMLSelectElement {
  if (option.kind === 'bool') {
    const box = el('input', { type: 'checkbox', id });
    box.addEventListener('change', () => input(box.checked ? 'true' : 'false'));
    return box;
  }
  if (usesSelect(option)) {
    const select = el('select', { id });
    select.addEventListener('change', () => input(select.value));
    return select;
  }
  const text = el('input', {
    type: 'text',
    id,
    inputmode: option.kind === 'integer' ? 'numeric' : option.kind === 'number' ? 'decimal' : null,
    autocomplete: 'off',
    spellcheck: 'false',
  });
  text.addEventListener('input', () => input(text.value));
  return text;
}

/** The first entry means "unset" and names the default; then the choices. Rebuilt only on change. */
function fillSelect(select: HTMLSelectElement, choices: [string, string][]): void {
  const wanted = ['', ...choices.map(([value]) => value)].join('\n');
  if (select.dataset.choices === wanted) return;
  replace(
    select,
    el('option', { value: '' }, 'default'),
    ...choices.map(([v, t]) => el('option', { value: v }, t)),
  );
  select.dataset.choices = wanted;
}
