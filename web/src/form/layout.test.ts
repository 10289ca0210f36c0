import { describe, expect, it } from 'vitest';
import type { OptionSpec } from '../types';
import { sectionsOf, subgroupsOf, type FormLayout } from './layout';

const option = (key: string, group: string): OptionSpec => ({
  key,
  group,
  kind: 'text',
  default: '',
  help: '',
  choices: [],
});

const LAYOUT: FormLayout = {
  ariaLabel: 'Test scenario',
  groupOrder: ['model', 'training', 'parallelism'],
  groupOf: (o) => (o.key === 'moved' ? 'parallelism' : o.group),
  groupTitle: (g) => g,
  labelFor: (k) => k,
  subgroups: {},
  folded: new Set(),
  resolved: () => undefined,
};

const names = (sections: [string, OptionSpec[]][]) =>
  sections.map(([group, options]) => `${group}: ${options.map((o) => o.key).join(' ')}`);

describe('form sections', () => {
  it('follow the layout order, then unlisted groups as the options give them', () => {
    const options = [
      option('zeta', 'extra'),
      option('tp', 'parallelism'),
      option('model', 'model'),
      option('seq_len', 'training'),
      option('moved', 'training'),
      option('alpha', 'another'),
      option('model_config', 'model'),
      option('from', 'input'),
      option('from_format', 'input'),
    ];
    expect(names(sectionsOf(options, LAYOUT))).toEqual([
      // No option falls in "model", yet it holds the model source; the model keys are not fields,
      // nor are a pasted config's (the paste box's).
      'model: ',
      'training: seq_len',
      'parallelism: tp moved',
      'extra: zeta',
      'another: alpha',
    ]);
  });

  it('split under sub-headings in their order, the unclaimed ones last under Other', () => {
    const options = [option('a', 'g'), option('b', 'g'), option('c', 'g'), option('d', 'g')];
    const subgroups = {
      of: { a: 'Second', c: 'First', d: 'First' },
      order: ['First', 'Second', 'Empty'],
    };
    expect(names(subgroupsOf(options, subgroups))).toEqual(['First: c d', 'Second: a', 'Other: b']);
  });
});
