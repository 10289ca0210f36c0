// The inference view: serving memory per GPU (`vramplan infer`) on the page the training view
// uses too (ScenarioPage): the scenario form on one side, the live answer on the other.

import { api } from '../../api';
import { exportName, inferenceToCsv } from '../../export';
import { toText } from '../../scenario';
import type { InferenceEstimate, Scenario } from '../../types';
import { ScenarioPage } from '../scenario_page';
import type { View } from '../view';
import { INFERENCE_LAYOUT } from './labels';
import { InferenceResults } from './results';

const DEFAULT_SCENARIO: Scenario = { model: 'Llama-3.1-8B', gpu_memory_utilization: 0.9 };
const NAME_KEYS = ['tp', 'pp', 'ep', 'dp', 'context', 'batch', 'kv_dtype', 'weight_dtype'];
/** The resolved settings the printed report lists. */
const SUMMARY_KEYS = ['tp', 'pp', 'ep', 'dp', 'context', 'batch', 'kv_dtype', 'engine'];

export const inferenceView: View = {
  id: 'inference',
  title: 'Inference',
  options: (data) => data.inferOptions,
  mount(container, host) {
    new ScenarioPage<InferenceEstimate>(container, host, {
      viewId: 'inference',
      pageClass: 'training-view inference-view',
      heading: 'Serving scenario',
      options: host.data.inferOptions,
      layout: INFERENCE_LAYOUT,
      defaultScenario: DEFAULT_SCENARIO,
      results: new InferenceResults(),
      request: (scenario, signal) => api.infer(scenario, signal),
      endpoint: '/api/infer',
      formats: host.data.formats.serving,
      pastePlaceholder: 'vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --max-model-len 32k ...',
      exportTitle: 'Launch command',
      exportHint:
        'The serving scenario above written as the engine’s command line; reading it back gives the same KV capacity.',
      fileName: (input, extension) => exportName(input, extension, 'vramplan-infer', NAME_KEYS),
      toCsv: inferenceToCsv,
      summary,
    });
  },
};

function summary(_input: Scenario, estimate: InferenceEstimate) {
  const resolved = estimate.scenario as Record<string, unknown>;
  const model = (resolved.model as Record<string, unknown> | undefined)?.name ?? 'custom';
  const shown = SUMMARY_KEYS.filter((key) => resolved[key] !== undefined && resolved[key] !== null);
  return {
    title: `vramplan serving: ${toText(model)}`,
    values: shown.map((key): [string, unknown] => [key, resolved[key]]),
  };
}
