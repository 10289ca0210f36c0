// The plan's space as an SVG scatter chart: every fitting layout the server drew (docs/planner.md
// "The space") at its peak device memory and tokens/s per GPU, the Pareto front as a line through
// distinct marks, the top-K candidates ringed with their rank, the GPU's usable memory and the
// planner's limit as vertical lines. Filters per dimension grey out the points they switch off;
// clicking a point opens its layout in the estimate view. The front and the top K are links in
// the tab order, so a keyboard reaches them (the table above also opens the top K).

import '../../styles/plan_space.css';
import { el } from '../../dom';
import { axisTitles, svg } from '../../svg_chart';
import { scenarioToQuery } from '../../scenario';
import {
  dimensionValues,
  niceTicks,
  passes,
  pointScenario,
  pointTitle,
  spaceSummary,
  type Exclusions,
  type PlanSpace,
  type SpacePoint,
} from './space_data';

const WIDTH = 640;
const HEIGHT = 400;
const MARGIN = { left: 72, right: 16, top: 16, bottom: 48 };
const GIB = 2 ** 30;

export interface SpaceChartInput {
  space: PlanSpace;
  usableBytes: number;
  limitBytes: number;
  gpuName: string;
}

/** The space card: summary, filters and chart. */
export function spaceCard(input: SpaceChartInput): HTMLElement {
  const { space } = input;
  const excluded: Exclusions = new Map();
  const marks: { point: SpacePoint; node: SVGElement }[] = [];
  const count = el('p', { class: 'hint', id: 'plan-space-count', 'aria-live': 'polite' });
  const update = () => {
    let shown = 0;
    for (const { point, node } of marks) {
      const on = passes(point, excluded);
      shown += on ? 1 : 0;
      node.classList.toggle('excluded', !on);
    }
    count.textContent =
      shown === marks.length
        ? ''
        : `${shown.toLocaleString('en-US')} of ${marks.length.toLocaleString('en-US')} drawn ` +
          `layouts pass the filters; the others are greyed out.`;
  };
  const chart = drawChart(input, marks);
  update();
  return el(
    'div',
    { class: 'card', id: 'plan-space' },
    el('h2', {}, 'All layouts that fit: peak memory vs tokens/s'),
    el('p', { class: 'hint', id: 'plan-space-summary' }, spaceSummary(space)),
    el('figure', { class: 'space-figure' }, chart, legend()),
    count,
    filters(space, excluded, update),
  );
}

function legend(): HTMLElement {
  return el(
    'figcaption',
    { class: 'space-legend' },
    el('span', { class: 'key-point' }, '● a layout (click: open its estimate)'),
    el('span', { class: 'key-pareto' }, '◆ Pareto front: no layout is faster with less memory'),
    el('span', { class: 'key-rank' }, '◯ top K, with its rank'),
    el('span', { class: 'key-usable' }, '│ usable memory'),
    el('span', { class: 'key-limit' }, '┆ limit (headroom)'),
  );
}

/** Checkboxes per dimension that varies, built from the values the points have. */
function filters(space: PlanSpace, excluded: Exclusions, update: () => void): HTMLElement {
  const groups = dimensionValues(space.points).map(({ dim, values }) =>
    el(
      'fieldset',
      { class: 'space-filter', 'data-dim': dim.key },
      el('legend', {}, dim.label),
      values.map((value) => {
        const id = `plan-space-${dim.key}-${value.replace(/[^A-Za-z0-9_-]/g, '_')}`;
        const box = el('input', { type: 'checkbox', id, checked: true, 'data-value': value });
        box.addEventListener('change', () => {
          const off = excluded.get(dim.key) ?? new Set<string>();
          if (box.checked) off.delete(value);
          else off.add(value);
          excluded.set(dim.key, off);
          update();
        });
        return el('label', { for: id, class: 'space-filter-value' }, box, ` ${value}`);
      }),
    ),
  );
  return el(
    'details',
    { class: 'group space-filters', id: 'plan-space-filters', open: true },
    el('summary', {}, 'Filter by dimension (unchecked values are greyed out)'),
    el('div', { class: 'space-filter-groups' }, groups),
  );
}

function drawChart(
  input: SpaceChartInput,
  marks: { point: SpacePoint; node: SVGElement }[],
): SVGSVGElement {
  const { space, usableBytes, limitBytes } = input;
  const points = space.points;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const maxGib = Math.max(usableBytes, ...points.map((p) => p.device_bytes)) / GIB;
  const maxSpeed = Math.max(...points.map((p) => p.tokens_per_s_per_gpu));
  const xTicks = niceTicks(maxGib);
  const yTicks = niceTicks(maxSpeed);
  const xMax = xTicks[xTicks.length - 1];
  const yMax = yTicks[yTicks.length - 1];
  const px = (bytes: number) => MARGIN.left + (bytes / GIB / xMax) * plotW;
  const py = (speed: number) => MARGIN.top + plotH - (speed / yMax) * plotH;

  const root = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'group',
    'aria-labelledby': 'plan-space-title plan-space-desc',
    id: 'plan-space-chart',
    class: 'svg-chart space-chart',
  });
  root.appendChild(
    svg(
      'title',
      { id: 'plan-space-title' },
      `Fitting layouts on ${input.gpuName}: peak device memory against tokens/s per GPU`,
    ),
  );
  root.appendChild(
    svg(
      'desc',
      { id: 'plan-space-desc' },
      `${spaceSummary(space)} The Pareto front's ${space.pareto.length} layouts and the top ` +
        `candidates are links in the tab order; each opens its estimate.`,
    ),
  );

  const grid = svg('g', { class: 'grid', 'aria-hidden': 'true' });
  for (const v of xTicks) {
    const x = px(v * GIB);
    grid.appendChild(svg('line', { x1: x, x2: x, y1: MARGIN.top, y2: MARGIN.top + plotH }));
    grid.appendChild(
      svg(
        'text',
        { x, y: MARGIN.top + plotH + 16, 'text-anchor': 'middle', class: 'tick' },
        `${v}`,
      ),
    );
  }
  for (const v of yTicks) {
    const y = py(v);
    grid.appendChild(svg('line', { x1: MARGIN.left, x2: MARGIN.left + plotW, y1: y, y2: y }));
    grid.appendChild(
      svg(
        'text',
        { x: MARGIN.left - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' },
        v.toLocaleString('en-US'),
      ),
    );
  }
  axisTitles(
    grid,
    { left: MARGIN.left, top: MARGIN.top, width: plotW, height: plotH, chartHeight: HEIGHT },
    'Peak device memory per GPU (GiB)',
    'Tokens/s per GPU',
  );
  root.appendChild(grid);

  // The device's usable memory and the planner's limit (usable less headroom).
  const lines = svg('g', { class: 'memory-lines', 'aria-hidden': 'true' });
  for (const [bytes, cls, label] of [
    [usableBytes, 'usable-line', 'usable'],
    [limitBytes, 'limit-line', 'limit'],
  ] as const) {
    const x = px(bytes);
    lines.appendChild(
      svg('line', { x1: x, x2: x, y1: MARGIN.top, y2: MARGIN.top + plotH, class: cls }),
    );
    lines.appendChild(
      svg(
        'text',
        {
          x: x - 4,
          y: MARGIN.top + (cls === 'usable-line' ? 12 : 26),
          'text-anchor': 'end',
          class: `${cls}-label`,
        },
        `${label} ${(bytes / GIB).toFixed(1)} GiB`,
      ),
    );
  }
  root.appendChild(lines);

  // The front as a line (steps from the least memory up to the fastest).
  const front = space.pareto.map((i) => points[i]);
  if (front.length > 1)
    root.appendChild(
      svg('polyline', {
        class: 'pareto-line',
        id: 'plan-space-pareto-line',
        'aria-hidden': 'true',
        points: front
          .map((p) => `${px(p.device_bytes).toFixed(1)},${py(p.tokens_per_s_per_gpu).toFixed(1)}`)
          .join(' '),
      }),
    );

  // Ordinary points first, the front and the top K over them.
  const layer = svg('g', { class: 'space-points' });
  const labels = svg('g', { class: 'rank-labels', 'aria-hidden': 'true' });
  const order = points
    .map((p, i) => ({ p, i }))
    .sort((a, b) => Number(a.p.pareto || a.p.rank > 0) - Number(b.p.pareto || b.p.rank > 0));
  for (const { p, i } of order) {
    const x = px(p.device_bytes);
    const y = py(p.tokens_per_s_per_gpu);
    const key = p.pareto || p.rank > 0;
    const href = `${window.location.pathname}${scenarioToQuery(pointScenario(space, p), 'training')}`;
    const link = svg('a', {
      href,
      class: `space-point${p.pareto ? ' pareto' : ''}${p.rank > 0 ? ' ranked' : ''}`,
      'data-index': i,
      'data-layout': p.layout,
      'data-bytes': p.device_bytes,
      'data-tokens': p.tokens_per_s_per_gpu,
      'aria-label': `open in estimate view: ${pointTitle(p)}`,
    });
    if (!key) link.setAttribute('tabindex', '-1');
    link.appendChild(svg('title', {}, pointTitle(p)));
    if (p.pareto)
      link.appendChild(
        svg('rect', {
          x: x - 4,
          y: y - 4,
          width: 8,
          height: 8,
          transform: `rotate(45 ${x} ${y})`,
          class: 'mark',
        }),
      );
    else link.appendChild(svg('circle', { cx: x, cy: y, r: 3, class: 'mark' }));
    if (p.rank > 0) {
      link.appendChild(svg('circle', { cx: x, cy: y, r: 8, class: 'rank-ring' }));
      // The rank beside the link, not in it: the link's name already says it.
      labels.appendChild(svg('text', { x: x + 9, y: y - 9, class: 'rank-label' }, `#${p.rank}`));
    }
    marks.push({ point: p, node: link });
    layer.appendChild(link);
  }
  root.appendChild(layer);
  root.appendChild(labels);
  return root;
}
