// Entry point: loads the catalogs the views share, draws the navigation and mounts the view the
// URL names (?view=training&...), keeping the URL in step with the scenario being edited.

// The stylesheets, in cascade order: Vite joins them in this order, and a later file wins over an
// earlier one at equal specificity (print.css overrides the screen rules, so it comes last).
import './styles/base.css';
import './styles/app_shell.css';
import './styles/page_layout.css';
import './styles/controls.css';
import './styles/form.css';
import './styles/tables.css';
import './styles/results.css';
import './styles/sweep.css';
import './styles/configs.css';
import './styles/print.css';
import { api } from './api';
import { el, replace } from './dom';
import { scenarioFromQuery, scenarioToQuery } from './scenario';
import { VIEWS } from './views/registry';
import type { AppData } from './views/view';

async function start(root: HTMLElement): Promise<void> {
  const main = document.getElementById('main')!;
  let data: AppData;
  try {
    const [training, serving, presets, gpus] = await Promise.all([
      api.options(),
      api.inferOptions(),
      api.models(),
      api.gpus(),
    ]);
    data = {
      options: training.options,
      inferOptions: serving.options,
      formats: { training: training.formats, serving: serving.formats },
      presets,
      gpus,
    };
  } catch (error) {
    replace(
      main,
      el(
        'p',
        { class: 'field-error', role: 'alert' },
        `Could not load the vramplan API: ${String(error)}`,
      ),
    );
    return;
  }
  const viewId = new URLSearchParams(window.location.search).get('view');
  const view = VIEWS.find((v) => v.id === viewId) ?? VIEWS[0];
  const { scenario } = scenarioFromQuery(window.location.search, view.options(data));
  renderNav(root, view.id);
  document.title = `vramplan · ${view.title}`;
  view.mount(main, {
    data,
    initial: scenario,
    publish: (next) => {
      const url = `${window.location.pathname}${scenarioToQuery(next, view.id)}`;
      window.history.replaceState(null, '', url);
    },
  });
}

function renderNav(root: HTMLElement, current: string): void {
  const nav = root.querySelector('#views')!;
  replace(
    nav,
    el(
      'ul',
      {},
      VIEWS.map((v) =>
        el(
          'li',
          {},
          el(
            'a',
            { href: `?view=${v.id}`, 'aria-current': v.id === current ? 'page' : null },
            v.title,
          ),
        ),
      ),
    ),
  );
}

void start(document.body);
