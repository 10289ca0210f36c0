// The training view: the scenario form on one side, the live estimate, sweep and exports on the
// other (the page itself is the shared ScenarioPage).

import { api } from '../../api';
import { estimateToCsv, exportName } from '../../export';
import { toText } from '../../scenario';
import type { Estimate, Scenario } from '../../types';
import { ScenarioPage } from '../scenario_page';
import type { View } from '../view';
import { TRAINING_LAYOUT } from './labels';
import { resolvedValue } from './resolved';
import { ResultsPanel } from './results';
import { SweepPanel } from './sweep';

const DEFAULT_SCENARIO: Scenario = { model: 'Llama-3.1-8B' };
/** The resolved settings the printed report lists. */
const SUMMARY_KEYS = [
  'gpus',
  'tp',
  'pp',
  'vpp',
  'dp',
  'cp',
  'ep',
  'seq_len',
  'micro_batch',
  'global_batch',
  'recompute',
  'optimizer',
  'param_dtype',
  'zero',
  'fsdp',
  'distributed_optimizer',
];

export const trainingView: View = {
  id: 'training',
  title: 'Training',
  options: (data) => data.options,
  mount(container, host) {
    const sweep = new SweepPanel();
    new ScenarioPage<Estimate>(container, host, {
      viewId: 'training',
      pageClass: 'training-view',
      heading: 'Scenario',
      options: host.data.options,
      layout: TRAINING_LAYOUT,
      defaultScenario: DEFAULT_SCENARIO,
      results: new ResultsPanel(),
      extraOutputs: [sweep.element],
      request: (scenario, signal) => api.estimate(scenario, signal),
      endpoint: '/api/estimate',
      formats: host.data.formats.training,
      pastePlaceholder:
        'torchrun ... pretrain_gpt.py --tensor-model-parallel-size 2 ... (a launch script, an argument list or a recipe YAML)',
      exportTitle: 'Export as framework config',
      exportHint:
        'The inputs of the estimate above written as a framework’s launch script or config, ready to run; reading it back gives the same estimate.',
      fileName: (input, extension) => exportName(input, extension),
      toCsv: estimateToCsv,
      summary,
      onAnswer: (input, estimate) => sweep.update(input, estimate.fit[0] ?? null),
      onNoAnswer: (reason) =>
        sweep.clear(
          reason === 'no-server'
            ? 'No answer from the server.'
            : 'The sweep waits for valid inputs.',
        ),
    });
  },
};

function summary(input: Scenario, estimate: Estimate) {
  const resolved = estimate.scenario as Record<string, Record<string, unknown>>;
  const model = resolved.model?.name ?? toText(input.model ?? 'custom');
  const values = SUMMARY_KEYS.map((key): [string, unknown] => [key, resolvedValue(resolved, key)]);
  return {
    title: `vramplan: ${model}`,
    values: values.filter(([, value]) => value !== undefined),
  };
}
