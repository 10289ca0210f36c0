// What the SVG charts (roofline, plan space) share: an element builder and the axis titles.

import './styles/svg_chart.css';

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with its attributes and children (text children become text nodes). */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  ...children: (SVGElement | string)[]
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children)
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

/** The x title under the plot and the y title rotated along its left edge. */
export function axisTitles(
  into: SVGElement,
  plot: { left: number; top: number; width: number; height: number; chartHeight: number },
  x: string,
  y: string,
): void {
  const middleY = plot.top + plot.height / 2;
  into.appendChild(
    svg(
      'text',
      {
        x: plot.left + plot.width / 2,
        y: plot.chartHeight - 8,
        'text-anchor': 'middle',
        class: 'axis-title',
      },
      x,
    ),
  );
  into.appendChild(
    svg(
      'text',
      {
        x: 14,
        y: middleY,
        'text-anchor': 'middle',
        transform: `rotate(-90 14 ${middleY})`,
        class: 'axis-title',
      },
      y,
    ),
  );
}
