// A view is one page of the app (training, inference, plan). Each lives in its own folder
// under views/ and gets the shared catalogs plus a way to publish its scenario to the URL.

import type { FormatLists } from '../form/config_io';
import type { Gpu, OptionSpec, Preset, Scenario } from '../types';

export interface AppData {
  /** Training settings (GET /api/options). */
  options: OptionSpec[];
  /** Serving settings (GET /api/infer/options). */
  inferOptions: OptionSpec[];
  /** The configs and command lines each kind of view can read ("from") and write ("emit"). */
  formats: { training: FormatLists; serving: FormatLists };
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
  /** The settings this view edits; a shared link's values are typed by them. */
  options(data: AppData): OptionSpec[];
  mount(container: HTMLElement, host: ViewHost): void;
}
