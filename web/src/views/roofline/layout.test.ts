import { describe, expect, it } from 'vitest';
import { sectionsOf } from '../../form/layout';
import type { OptionSpec } from '../../types';
import { CLUSTER_OPTIONS, ROOFLINE_LAYOUT, rooflineOptions, rooflineResolved } from './layout';

const option = (key: string, group: string): OptionSpec => ({
  key,
  kind: 'integer',
  group,
  default: '',
  help: '',
  choices: [],
});

describe('the roofline form', () => {
  const training = [
    option('model', 'model'),
    option('tp', 'parallelism'),
    option('gpu', 'hardware'),
  ];

  it('has the training inputs, then the cluster’s, each once', () => {
    const keys = rooflineOptions([...training, option('gpus_per_node', 'plan')]).map((o) => o.key);
    expect(keys).toEqual([
      'model',
      'tp',
      'gpu',
      'gpus_per_node',
      'intra_node_gbps',
      'inter_node_gbps',
      'host_link_gbps',
      'host_memory_gbps',
      'nvme_gbps',
    ]);
  });

  it('shows the cluster section right after the GPU’s', () => {
    const sections = sectionsOf(rooflineOptions(training), ROOFLINE_LAYOUT).map(([g]) => g);
    expect(sections).toEqual(['model', 'parallelism', 'hardware', 'cluster']);
    expect(ROOFLINE_LAYOUT.groupTitle('cluster')).toMatch(/^Cluster/);
    expect(ROOFLINE_LAYOUT.labelFor('gpus_per_node')).toBe('GPUs per node');
    expect(ROOFLINE_LAYOUT.labelFor('tp')).toBe('Tensor parallel (TP)');
  });

  it('reads the catalog’s cluster and the GPU from the answer', () => {
    const answer = {
      gpu: { id: 'h100-80gb' },
      cluster: {
        gpus_per_node: 8,
        intra_node_gbps: 450,
        inter_node_gbps: 50,
        host_link_gbps: 64,
        host_memory_gbps: 614,
        nvme_gbps: 25,
      },
    };
    for (const o of CLUSTER_OPTIONS)
      expect(rooflineResolved(answer, o.key)).toBe(answer.cluster[o.key as 'gpus_per_node']);
    expect(rooflineResolved(answer, 'gpu')).toBe('h100-80gb');
    expect(rooflineResolved(answer, 'tp')).toBeUndefined();
    expect(rooflineResolved(null, 'gpu')).toBeUndefined();
  });
});
