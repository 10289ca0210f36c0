// "Copy as …": the run on screen written as a framework's config or command line ("emit"), in a
// read-only code block with Copy (clipboard, with a fallback) and Download. The formats are the
// server's writers of the view's kind; the page says what to write (the shown inputs, the plan's
// search) and clears the block whenever that changes, so that a copied config is never stale.

import { TransportError, type ApiResult } from '../api';
import { copyText, download, el, replace } from '../dom';
import { configFileName, type ConfigFormat, type EmittedConfig } from './config_io';

export interface ConfigExportSpec {
  /** Element ids start with it. */
  id: string;
  /** The heading: "Export as framework config", "Copy the winner as a config". */
  title: string;
  /** A line under the heading. */
  hint: string;
  formats: ConfigFormat[];
  /** Writes the run as `format`; null when there is nothing to write (no valid answer yet). */
  request: (format: string) => Promise<ApiResult<EmittedConfig>> | null;
  /** The model named in the file name. */
  model: () => unknown;
}

export class ConfigExport {
  readonly element: HTMLElement;
  private readonly format: HTMLSelectElement;
  private readonly button: HTMLButtonElement;
  private readonly output = el('div', { class: 'config-output' });
  private readonly status: HTMLElement;
  /** Counts requests, so that only the newest answer is shown. */
  private sequence = 0;

  constructor(private readonly spec: ConfigExportSpec) {
    const id = spec.id;
    this.format = el(
      'select',
      { id: `${id}-format` },
      spec.formats.map((f) => el('option', { value: f.name, title: f.what }, f.name)),
    );
    this.button = el('button', { type: 'button', id: `${id}-show` }, 'Write config');
    this.button.addEventListener('click', () => void this.write());
    this.format.addEventListener('change', () => this.clear());
    this.status = el('p', { class: 'status', id: `${id}-status`, role: 'status' });
    this.element = el(
      'section',
      { class: 'card config-export no-print', id, 'aria-labelledby': `${id}-title` },
      el('h2', { id: `${id}-title` }, spec.title),
      el('p', { class: 'hint' }, spec.hint),
      spec.formats.length
        ? el(
            'div',
            { class: 'paste-actions' },
            el('label', { for: this.format.id }, 'Copy as'),
            this.format,
            this.button,
          )
        : el('p', { class: 'hint' }, 'This server writes no config of this kind.'),
      this.status,
      this.output,
    );
  }

  /** The run changed: a config already shown is no longer its config. */
  clear(): void {
    this.sequence++;
    this.status.textContent = '';
    replace(this.output);
  }

  private async write(): Promise<void> {
    const format = this.format.value;
    const mine = ++this.sequence;
    const pending = this.spec.request(format);
    if (!pending) {
      this.status.textContent = 'Nothing to write yet: the inputs have no valid answer.';
      replace(this.output);
      return;
    }
    this.status.textContent = `Writing ${format}…`;
    replace(this.output);
    let result: ApiResult<EmittedConfig>;
    try {
      result = await pending;
    } catch (error) {
      if (mine !== this.sequence) return;
      this.showError(error instanceof TransportError ? error.message : String(error));
      return;
    }
    if (mine !== this.sequence) return;
    if (!result.ok) {
      this.showError(result.error.message);
      return;
    }
    this.show(result.value);
  }

  private showError(message: string): void {
    this.status.textContent = '';
    replace(
      this.output,
      el('p', { class: 'field-error', id: `${this.spec.id}-error`, role: 'alert' }, message),
    );
  }

  private show(emitted: EmittedConfig): void {
    const id = this.spec.id;
    const code = el('code', {}, emitted.config);
    const pre = el(
      'pre',
      {
        class: 'config-code',
        id: `${id}-config`,
        tabindex: '0',
        'aria-label': `${emitted.format} config`,
        'data-format': emitted.format,
      },
      code,
    );
    const name = configFileName(emitted.format, this.spec.model(), emitted.config);
    const copied = el('span', { class: 'hint', id: `${id}-copied`, role: 'status' });
    const copy = el('button', { type: 'button', id: `${id}-copy` }, 'Copy');
    copy.addEventListener('click', async () => {
      const ok = await copyText(emitted.config);
      if (ok) {
        copied.textContent = 'Copied to the clipboard.';
        return;
      }
      // Neither clipboard route worked: select the text so that Ctrl+C copies it.
      const range = document.createRange();
      range.selectNodeContents(code);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
      copied.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
    });
    const save = el(
      'button',
      { type: 'button', class: 'secondary', id: `${id}-download` },
      'Download',
    );
    save.addEventListener('click', () => download(name, 'text/plain', emitted.config));
    this.status.textContent = `${emitted.format}: ${name}`;
    replace(
      this.output,
      emitted.note ? el('p', { class: 'hint', id: `${id}-note` }, emitted.note) : null,
      pre,
      el('div', { class: 'toolbar' }, copy, save, copied),
    );
  }
}
