// What the server made of a pasted config or command: every key it understood (the key and value
// as written, and the setting it made), every key it ignored (and why), its warnings, and the
// settings the view's form has no input for. A folding card whose lists wrap into one column on a
// narrow screen.

import { el, replace } from '../dom';
import { toText } from '../scenario';
import { importSummary, type ImportedConfig } from './config_io';

/** Lists up to this long start open; longer ones fold, so that the results stay in view. */
const OPEN_UP_TO = 10;

export class ImportReport {
  readonly element: HTMLDetailsElement;
  private readonly summary = el('summary', {});
  private readonly body = el('div', { class: 'import-body' });

  /** `id`: the element id the paste box links to. */
  constructor(id: string) {
    this.element = el(
      'details',
      { class: 'card import-report', id, 'aria-label': 'What was read from the pasted text' },
      this.summary,
      this.body,
    );
    this.element.hidden = true;
  }

  /**
   * Shows an import; `unshown`: settings it made that the form has no input for (sent anyway or
   * listed, as `unshownNote` says).
   */
  show(imported: ImportedConfig, unshown: [string, unknown][] = [], unshownNote = ''): void {
    replace(
      this.summary,
      el('h2', {}, 'From your config'),
      ' ',
      el('span', { class: 'import-counts' }, importSummary(imported)),
    );
    replace(
      this.body,
      imported.warnings.length
        ? el(
            'div',
            { class: 'import-warnings' },
            el('h3', {}, 'Warnings'),
            el(
              'ul',
              { id: 'import-warnings' },
              imported.warnings.map((w) => el('li', {}, w)),
            ),
          )
        : null,
      this.list(
        'import-understood',
        `Understood (${imported.understood.length})`,
        imported.understood.map((k) => [k.key, k.value, el('span', {}, '→ ', k.setting)]),
        imported.understood.length <= OPEN_UP_TO,
      ),
      this.list(
        'import-ignored',
        `Ignored (${imported.ignored.length})`,
        imported.ignored.map((k) => [k.key, k.value, el('span', { class: 'reason' }, k.reason)]),
        imported.ignored.length <= OPEN_UP_TO,
      ),
      unshown.length
        ? this.list(
            'import-unshown',
            `Not in this form (${unshown.length})`,
            unshown.map(([key, value]) => [key, toText(value), el('span', {}, unshownNote)]),
            true,
          )
        : null,
    );
    this.element.hidden = false;
    this.element.open = true;
  }

  clear(): void {
    this.element.hidden = true;
    replace(this.body);
  }

  /** A folding list of keys: key and value as written, then what became of it. */
  private list(
    id: string,
    title: string,
    rows: [string, string, HTMLElement][],
    open: boolean,
  ): HTMLElement {
    const items = rows.map(([key, value, what]) =>
      el(
        'li',
        { 'data-key': key },
        el('code', { class: 'import-key' }, key),
        el('span', { class: 'import-value' }, value),
        el('span', { class: 'import-what' }, what),
      ),
    );
    return el(
      'details',
      { class: 'import-list', open },
      el('summary', {}, title),
      items.length
        ? el('ul', { id, class: 'import-keys' }, items)
        : el('p', { id, class: 'hint' }, 'None.'),
    );
  }
}
