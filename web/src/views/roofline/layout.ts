// The roofline view's form: the training scenario's inputs (GET /api/options) and the cluster
// beside them (the roofline_options() of src/io/options.cc: `vramplan roofline --gpus-per-node`,
// `--intra-node-gbps`, `--inter-node-gbps` and the offload bandwidths), laid out as the training
// view lays out its inputs.

import type { FormLayout } from '../../form/layout';
import type { OptionSpec } from '../../types';
import { GROUP_ORDER, TRAINING_LAYOUT } from '../training/labels';

export const CLUSTER_OPTIONS: OptionSpec[] = [
  {
    key: 'gpus_per_node',
    flag: '--gpus-per-node',
    kind: 'integer',
    group: 'cluster',
    default: 'from the GPU catalog (8)',
    help: 'GPUs per node (NVLink domain)',
    choices: [],
  },
  {
    key: 'intra_node_gbps',
    flag: '--intra-node-gbps',
    kind: 'number',
    group: 'cluster',
    default: 'from the GPU catalog',
    help: 'NVLink/NVSwitch bandwidth per GPU, GB/s, one direction',
    choices: [],
  },
  {
    key: 'inter_node_gbps',
    flag: '--inter-node-gbps',
    kind: 'number',
    group: 'cluster',
    default: 'from the GPU catalog',
    help: 'network bandwidth per GPU, GB/s, one direction (8×400 Gb/s per 8-GPU node = 50)',
    choices: [],
  },
  {
    key: 'host_link_gbps',
    flag: '--host-link-gbps',
    kind: 'number',
    group: 'cluster',
    default: 'from the GPU catalog',
    help: 'GPU-to-host link (PCIe x16, NVLink-C2C), GB/s one direction: offload transfers',
    choices: [],
  },
  {
    key: 'host_memory_gbps',
    flag: '--host-memory-gbps',
    kind: 'number',
    group: 'cluster',
    default: 'from the GPU catalog',
    help: "the node's DRAM bandwidth, GB/s (all sockets): the CPU optimizer step under offload",
    choices: [],
  },
  {
    key: 'nvme_gbps',
    flag: '--nvme-gbps',
    kind: 'number',
    group: 'cluster',
    default: '25 (an assumption)',
    help: "the node's NVMe bandwidth, GB/s (DeepSpeed's ds_nvme_tune measures it): NVMe offload",
    choices: [],
  },
];

const CLUSTER_LABELS: Record<string, string> = {
  gpus_per_node: 'GPUs per node',
  intra_node_gbps: 'NVLink bandwidth per GPU (GB/s)',
  inter_node_gbps: 'Network bandwidth per GPU (GB/s)',
  host_link_gbps: 'Host link per GPU (GB/s)',
  host_memory_gbps: 'Node DRAM bandwidth (GB/s)',
  nvme_gbps: 'Node NVMe bandwidth (GB/s)',
};

/** The form's settings: the training scenario's, then the cluster's. */
export function rooflineOptions(training: OptionSpec[]): OptionSpec[] {
  const keys = new Set(CLUSTER_OPTIONS.map((o) => o.key));
  return [...training.filter((o) => !keys.has(o.key)), ...CLUSTER_OPTIONS];
}

/**
 * What the core used for a cluster input or the GPU, read from the roofline answer, so that an
 * unset input shows the catalog's value; the answer has no resolved scenario for the others.
 */
export function rooflineResolved(answer: unknown, key: string): unknown {
  const a = answer as {
    cluster?: Record<string, unknown>;
    gpu?: { id?: string };
  } | null;
  if (!a) return undefined;
  if (key in CLUSTER_LABELS) return a.cluster?.[key];
  if (key === 'gpu') return a.gpu?.id;
  return undefined;
}

export const ROOFLINE_LAYOUT: FormLayout = {
  ...TRAINING_LAYOUT,
  ariaLabel: 'Roofline scenario',
  groupOrder: [
    ...GROUP_ORDER.slice(0, GROUP_ORDER.indexOf('hardware') + 1),
    'cluster',
    ...GROUP_ORDER.slice(GROUP_ORDER.indexOf('hardware') + 1),
  ],
  groupTitle: (group) =>
    group === 'cluster'
      ? 'Cluster (defaults from the GPU catalog)'
      : TRAINING_LAYOUT.groupTitle(group),
  labelFor: (key) => CLUSTER_LABELS[key] ?? TRAINING_LAYOUT.labelFor(key),
  resolved: rooflineResolved,
};
