// "Paste a config or command": a disclosure above a view's inputs with a text box, the format to
// read it as ("detect", or one of the server's formats of the view's kind) and a Read button. The
// page does the reading; the box shows that it reads, the server's error beside the text (naming
// the key as the pasted text writes it), or a one-line summary linking to the full list. The
// text is kept for the browser tab's session, never in the page's link.

import { el, replace } from '../dom';
import type { ApiError } from '../types';
import { loadPaste, savePaste, type ConfigFormat } from './config_io';

/** What reading a paste came to: the summary to show, or the error to show beside the text. */
export type ReadOutcome = { summary: string } | { error: ApiError } | { cancelled: true };

export interface PasteBoxSpec {
  /** The view's id: the session keeps one paste per view, and element ids start with it. */
  view: string;
  /** The formats the view's endpoint reads. */
  formats: ConfigFormat[];
  /** What the text box invites: "a Megatron-LM launch script, ...". */
  placeholder: string;
  read: (text: string, format: string) => Promise<ReadOutcome>;
  /** Where the full list of understood and ignored keys is shown (an element id). */
  reportId: string;
}

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

export class PasteBox {
  readonly element: HTMLDetailsElement;
  private readonly text: HTMLTextAreaElement;
  private readonly format: HTMLSelectElement;
  private readonly button: HTMLButtonElement;
  private readonly message: HTMLElement;

  constructor(private readonly spec: PasteBoxSpec) {
    const id = `${spec.view}-paste`;
    this.text = el('textarea', {
      id: `${id}-text`,
      rows: 8,
      spellcheck: 'false',
      autocomplete: 'off',
      placeholder: spec.placeholder,
      'aria-describedby': `${id}-message ${id}-help`,
    });
    this.format = el(
      'select',
      { id: `${id}-format` },
      el('option', { value: '' }, 'detect'),
      spec.formats.map((f) => el('option', { value: f.name, title: f.what }, f.name)),
    );
    this.button = el('button', { type: 'button', id: `${id}-read` }, 'Read');
    this.message = el('p', { id: `${id}-message`, class: 'paste-message', role: 'status' });
    this.message.hidden = true;
    const saved = loadPaste(storage(), spec.view);
    this.text.value = saved.text;
    if (spec.formats.some((f) => f.name === saved.format)) this.format.value = saved.format;
    const keep = () =>
      savePaste(storage(), spec.view, { text: this.text.value, format: this.format.value });
    this.text.addEventListener('input', keep);
    this.format.addEventListener('change', keep);
    this.button.addEventListener('click', () => void this.read());
    this.text.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void this.read();
    });
    this.element = el(
      'details',
      { class: 'paste-box no-print', id, open: saved.text !== '' },
      el('summary', {}, 'Paste a config or command'),
      el('label', { for: this.text.id }, 'Your launch script, config file or command line'),
      this.text,
      el(
        'small',
        { class: 'help', id: `${id}-help` },
        `Read: ${spec.formats.map((f) => f.name).join(', ') || 'the formats the server knows'}. ` +
          'The form is filled with what it sets (every other input back to its default); ' +
          'the text stays in this tab, not in the link (Ctrl+Enter reads it).',
      ),
      el(
        'div',
        { class: 'paste-actions' },
        el('label', { for: this.format.id }, 'Format'),
        this.format,
        this.button,
      ),
      this.message,
    );
  }

  private async read(): Promise<void> {
    const text = this.text.value;
    if (text.trim() === '') {
      this.showError('Paste a launch script, config file or command line first.');
      return;
    }
    this.button.disabled = true;
    this.text.removeAttribute('aria-invalid');
    this.showMessage('Reading…', false);
    let outcome: ReadOutcome;
    try {
      outcome = await this.spec.read(text, this.format.value);
    } catch (error) {
      outcome = {
        error: { field: '', value: '', accepted: '', reason: '', message: String(error) },
      };
    } finally {
      this.button.disabled = false;
    }
    if ('cancelled' in outcome) {
      this.message.hidden = true;
    } else if ('error' in outcome) {
      this.showError(outcome.error.message, outcome.error.field);
    } else {
      this.showMessage(outcome.summary, false);
      this.message.append(
        ' ',
        el('a', { href: `#${this.spec.reportId}` }, 'What was understood and ignored'),
      );
    }
  }

  /** The server's message, which names the key as the pasted text writes it (`field`). */
  private showError(message: string, field = ''): void {
    this.text.setAttribute('aria-invalid', 'true');
    this.showMessage(`Not read: ${message}`, true);
    this.message.dataset.field = field;
  }

  private showMessage(text: string, isError: boolean): void {
    replace(this.message, text);
    this.message.classList.toggle('field-error', isError);
    this.message.setAttribute('role', isError ? 'alert' : 'status');
    delete this.message.dataset.field;
    this.message.hidden = false;
  }
}
