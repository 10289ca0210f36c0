// A view is one page of the app (training now; inference and plan later). Each lives in its own
// module under views/ and gets the shared catalogs plus a way to publish its scenario to the URL.

import type { Gpu, OptionSpec, Preset, Scenario } from '../types';

export interface AppData {
  options: OptionSpec[];
  presets: Preset[];
  gpus: Gpu[];
}

export interface ViewHost {
  data: AppData;
  /** The scenario the page was opened with (from a shared link), or {} for the view's default. */
  initial: Scenario;
  /** Called on every change: the scenario is written into the page URL, so a link reproduces it. */
  publish: (scenario: Scenario) => void;
}

export interface View {
  id: string;
  title: string;
  mount(container: HTMLElement, host: ViewHost): void;
}
