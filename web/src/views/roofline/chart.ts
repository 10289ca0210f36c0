// The roofline chart as SVG: log-log axes of arithmetic intensity (FLOP/byte) and attainable
// FLOP/s, the GPU's compute roofs (matmul, attention, element-wise) rising from the one HBM
// bandwidth slope, and every operation placed on them as a point (circle: compute-bound, square:
// memory-bound; filled: forward, hollow: backward). The chart is an image with a title and a
// description; the operation table beside it carries the same numbers for screen readers.

import { el } from '../../dom';
import { axisTitles, svg } from '../../svg_chart';
import {
  attainable,
  chartRanges,
  decades,
  flopsText,
  logScale,
  opRows,
  plottable,
  roofKind,
  roofLine,
  roofsOf,
  siNumber,
  type RooflineAnswer,
} from './roofline_data';

const WIDTH = 640;
const HEIGHT = 400;
const MARGIN = { left: 70, right: 16, top: 16, bottom: 48 };
export const ROOF_COLORS: Record<string, string> = {
  matmul: '#0b5cad',
  attention: '#7b4173',
  elementwise: '#8c6d31',
};
const BOUND_COLORS = { compute: '#0b5cad', memory: '#c2410c' };

function decadeLabel(v: number): string {
  return siNumber(v);
}

/** The chart of `answer` in a figure with its legend. */
export function rooflineChart(answer: RooflineAnswer): HTMLElement {
  const { x, y } = chartRanges(answer);
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = logScale(x, plotW);
  const sy = logScale(y, plotH);
  const px = (v: number) => MARGIN.left + sx(v);
  const py = (v: number) => MARGIN.top + plotH - sy(v);
  const bandwidth = answer.gpu.hbm_gbps * 1e9;
  const rows = opRows(answer);
  const placed = rows.filter(plottable);

  const root = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-labelledby': 'roofline-chart-title roofline-chart-desc',
    id: 'roofline-chart',
    class: 'svg-chart roofline-chart',
  });
  root.appendChild(svg('title', { id: 'roofline-chart-title' }, `Roofline of ${answer.gpu.id}`));
  const memory = placed.filter((r) => r.bound === 'memory').length;
  root.appendChild(
    svg(
      'desc',
      { id: 'roofline-chart-desc' },
      `Log-log chart of attainable FLOP/s against arithmetic intensity. HBM bandwidth ` +
        `${answer.gpu.hbm_gbps} GB/s; roofs: matmul ${answer.gpu.matmul_tflops} TFLOP/s, ` +
        `attention ${answer.gpu.attention_tflops} TFLOP/s, element-wise ` +
        `${answer.gpu.vector_tflops} TFLOP/s. ${placed.length} operations placed, ${memory} ` +
        `memory-bound and ${placed.length - memory} compute-bound; the operation table lists them.`,
    ),
  );

  // Grid and ticks at each decade.
  const grid = svg('g', { class: 'grid', 'aria-hidden': 'true' });
  for (const v of decades(x)) {
    grid.appendChild(svg('line', { x1: px(v), x2: px(v), y1: MARGIN.top, y2: MARGIN.top + plotH }));
    grid.appendChild(
      svg(
        'text',
        { x: px(v), y: MARGIN.top + plotH + 16, 'text-anchor': 'middle', class: 'tick' },
        decadeLabel(v),
      ),
    );
  }
  for (const v of decades(y)) {
    grid.appendChild(
      svg('line', { x1: MARGIN.left, x2: MARGIN.left + plotW, y1: py(v), y2: py(v) }),
    );
    grid.appendChild(
      svg(
        'text',
        { x: MARGIN.left - 6, y: py(v) + 4, 'text-anchor': 'end', class: 'tick' },
        decadeLabel(v),
      ),
    );
  }
  axisTitles(
    grid,
    { left: MARGIN.left, top: MARGIN.top, width: plotW, height: plotH, chartHeight: HEIGHT },
    'Arithmetic intensity (FLOP/byte)',
    'Attainable FLOP/s',
  );
  root.appendChild(grid);

  // Roofs: the bandwidth slope up to each ridge, then the peak.
  const roofs = svg('g', { class: 'roofs' });
  for (const roof of roofsOf(answer)) {
    if (!(roof.peak > 0) || !(bandwidth > 0)) continue;
    const points = roofLine(roof, bandwidth, x, y)
      .map(([a, b]) => `${px(a).toFixed(1)},${py(Math.max(b, y.min)).toFixed(1)}`)
      .join(' ');
    roofs.appendChild(
      svg(
        'polyline',
        {
          points,
          fill: 'none',
          stroke: ROOF_COLORS[roof.kind],
          'stroke-width': roof.kind === 'matmul' ? 2.5 : 1.5,
          'stroke-dasharray': roof.kind === 'matmul' ? '' : '6 4',
          'data-roof': roof.kind,
          'data-peak': roof.peak,
          'data-ridge': roof.ridge,
        },
        svg(
          'title',
          {},
          `${roof.label} roof: ${flopsText(roof.peak)}/s, ridge ${roof.ridge.toFixed(1)} FLOP/byte`,
        ),
      ),
    );
  }
  root.appendChild(roofs);

  // Operations.
  const points = svg('g', { class: 'ops' });
  for (const row of placed) {
    const cx = px(row.intensity);
    const cy = py(attainable(row));
    const color = BOUND_COLORS[row.bound];
    const forward = row.pass === 'forward';
    const title = svg(
      'title',
      {},
      `${row.section}: ${row.op} (${row.pass}), ${row.intensity.toFixed(1)} FLOP/byte, ` +
        `${flopsText(attainable(row))}/s, ${row.bound}-bound under the ${roofKind(row.kind)} roof`,
    );
    const common = {
      fill: forward ? color : '#ffffff',
      stroke: color,
      'stroke-width': 1.5,
      'data-op': row.id,
      'data-bound': row.bound,
      'data-intensity': row.intensity,
      class: 'op-point',
    };
    points.appendChild(
      row.bound === 'compute'
        ? svg('circle', { ...common, cx: cx.toFixed(1), cy: cy.toFixed(1), r: 4.5 }, title)
        : svg(
            'rect',
            {
              ...common,
              x: (cx - 4).toFixed(1),
              y: (cy - 4).toFixed(1),
              width: 8,
              height: 8,
            },
            title,
          ),
    );
  }
  root.appendChild(points);

  const off = rows.length - placed.length;
  return el(
    'figure',
    { class: 'roofline-figure' },
    root,
    el(
      'figcaption',
      { class: 'roofline-legend' },
      el('span', { class: 'key key-compute' }, '● compute-bound'),
      el('span', { class: 'key key-memory' }, '■ memory-bound'),
      el('span', { class: 'key' }, 'filled: forward, hollow: backward'),
      el('span', { class: 'key key-matmul' }, '— matmul roof'),
      el(
        'span',
        { class: 'key key-attention' },
        '- - attention roof',
        answer.gpu.attention_tflops === answer.gpu.matmul_tflops ? ' (= matmul here)' : '',
      ),
      el('span', { class: 'key key-elementwise' }, '- - element-wise roof'),
      off > 0
        ? el(
            'span',
            { class: 'key' },
            `${off} ${off === 1 ? 'operation' : 'operations'} without FLOPs not drawn`,
          )
        : null,
    ),
  );
}
