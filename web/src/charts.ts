// Chart.js, registered once with only the parts the views use, and a plugin that draws the GPU's
// capacity as a horizontal line across a chart.

import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  Tooltip,
  type Plugin,
} from 'chart.js';

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  Tooltip,
);
Chart.defaults.font.family = getComputedStyle(document.documentElement).fontFamily || 'system-ui';
// Keeps printing and screenshots independent of animation timing.
Chart.defaults.animation = false;

export { Chart };

export interface CapacityLineOptions {
  /** y value of the line (same unit as the y axis); null draws nothing. */
  value: number | null;
  label: string;
  color?: string;
}

declare module 'chart.js' {
  interface PluginOptionsByType<TType> {
    capacityLine?: CapacityLineOptions;
    _type?: TType;
  }
}

/** Draws options.plugins.capacityLine as a dashed horizontal line with its label. */
export const capacityLine: Plugin = {
  id: 'capacityLine',
  afterDatasetsDraw(chart, _args, options: CapacityLineOptions) {
    if (options?.value === null || options?.value === undefined) return;
    const y = chart.scales.y?.getPixelForValue(options.value);
    const { left, right, top, bottom } = chart.chartArea;
    if (y === undefined || y < top || y > bottom) return;
    const ctx = chart.ctx;
    ctx.save();
    ctx.strokeStyle = options.color ?? '#c62828';
    ctx.fillStyle = options.color ?? '#c62828';
    ctx.lineWidth = 2;
    ctx.setLineDash([6, 4]);
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(right, y);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.font = '12px system-ui, sans-serif';
    ctx.textAlign = 'right';
    ctx.fillText(options.label, right - 4, y - 4);
    ctx.restore();
  },
};

/** A fixed colour per component the core reports, so colours do not move between scenarios. */
const COMPONENT_COLORS: Record<string, string> = {
  weights: '#1f77b4',
  gradients: '#ff7f0e',
  'master weights': '#2ca02c',
  'optimizer states': '#d62728',
  'unsharded parameter buffers': '#9467bd',
  'unit gradients (before reduce-scatter)': '#c5b0d5',
  activations: '#8c564b',
  'recompute working set': '#e377c2',
  'final norm + LM head inputs': '#bcbd22',
  'logits + loss': '#17becf',
  'GEMM workspaces': '#393b79',
  'allocator pool overhead': '#9e9e9e',
  'CUDA context': '#637939',
  'NCCL buffers': '#8c6d31',
};
const SPARE_COLORS = ['#843c39', '#7b4173', '#3182bd', '#31a354', '#756bb1', '#e6550d'];

export function componentColor(component: string, index: number): string {
  return COMPONENT_COLORS[component] ?? SPARE_COLORS[index % SPARE_COLORS.length];
}
