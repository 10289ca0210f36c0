// The settings of a plan that its form has no input for: those a pasted config set (its model as
// a config.json, its precision, optimizer, framework conventions ...) or a shared link carries.
// They go with every search and into the link, listed under the inputs with a button that drops
// them, so that nothing is sent that the page does not show.

import { el, replace } from '../../dom';
import { toText } from '../../scenario';
import type { Scenario } from '../../types';
import { configModelText } from './plan_data';

export class PlanExtras {
  readonly element = el('div', { class: 'plan-extras', id: 'plan-extras' });
  private extras: Scenario = {};

  constructor(private readonly onDrop: () => void) {
    this.element.hidden = true;
  }

  set(extras: Scenario): void {
    this.extras = { ...extras };
    this.render();
  }

  values(): Scenario {
    return { ...this.extras };
  }

  /** What the config model is ("megatron_gpt, 32 layers, hidden 4096"), or null without one. */
  configModel(): string | null {
    return this.extras.model_config === undefined
      ? null
      : configModelText(this.extras.model_config);
  }

  private render(): void {
    const listed = Object.entries(this.extras).filter(([key]) => key !== 'model_config');
    this.element.hidden = Object.keys(this.extras).length === 0;
    replace(
      this.element,
      el('h3', { class: 'subgroup' }, 'Also from the pasted config'),
      el(
        'p',
        { class: 'hint' },
        'No input here for these; every search uses them',
        this.extras.model_config !== undefined ? ', and the model select can use its model' : '',
        '.',
      ),
      listed.length
        ? el(
            'ul',
            { class: 'extras-list' },
            listed.map(([key, value]) =>
              el('li', { 'data-key': key }, el('code', {}, key), ' = ', toText(value)),
            ),
          )
        : null,
      el(
        'button',
        {
          type: 'button',
          class: 'secondary',
          id: 'plan-extras-drop',
          onclick: () => this.onDrop(),
        },
        'Drop them',
      ),
    );
  }
}
