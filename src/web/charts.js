// Line charts as inline SVG: a few hundred samples need no chart library. Each chart is an image
// with a title and a description that says what a sighted reader sees (range, peak, average).

const SVG = 'http://www.w3.org/2000/svg';
const HEIGHT = 220;
const MARGIN = { top: 12, right: 16, bottom: 44, left: 78 };

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @param {...(Node | string)} children
 * @returns {SVGElement}
 */
function svg(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return element;
}

/**
 * A readable axis top a little above `value`: 1, 2, 4 or 8 times a power of ten, so that the
 * quarter lines fall on round numbers too.
 * @param {number} value
 */
export function niceCeiling(value) {
  if (!(value > 0)) return 1;
  const target = value * 1.1;
  const power = 10 ** Math.floor(Math.log10(target));
  for (const step of [1, 2, 4, 8]) if (step * power >= target) return step * power;
  return 10 * power;
}

/**
 * @param {object} spec
 * @param {string} spec.id          unique on the page (it names the title and description)
 * @param {string} spec.title       e.g. "CPU usage"
 * @param {string} spec.yLabel      axis label, with its unit
 * @param {Array<{t: number, v: number}>} spec.points  t in ms since the first sample
 * @param {number} [spec.max]       top of the y axis (default: a round number above the peak)
 * @param {(v: number) => string} spec.format  a value as people read it ("35 %", "120 MB")
 * @param {number} [spec.width]     drawing width; text keeps its size when it matches the screen's
 */
export function lineChart({ id, title, yLabel, points, max, format, width = 640 }) {
  const WIDTH = width;
  const peak = Math.max(...points.map((point) => point.v));
  const average = points.reduce((sum, point) => sum + point.v, 0) / points.length;
  const span = /** @type {{ t: number }} */ (points.at(-1)).t;
  const top = max ?? niceCeiling(peak);
  const innerWidth = WIDTH - MARGIN.left - MARGIN.right;
  const innerHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (/** @type {number} */ t) => MARGIN.left + (span === 0 ? innerWidth / 2 : (t / span) * innerWidth);
  const y = (/** @type {number} */ v) => MARGIN.top + innerHeight - (Math.min(v, top) / top) * innerHeight;
  const seconds = (/** @type {number} */ t) => `${span < 10_000 ? (t / 1000).toFixed(1) : Math.round(t / 1000)} s`;

  const grid = [0, 0.25, 0.5, 0.75, 1].map((fraction) => {
    const value = top * fraction;
    return svg(
      'g',
      { class: 'tick' },
      svg('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(value), y2: y(value) }),
      svg(
        'text',
        { x: MARGIN.left - 8, y: y(value), 'text-anchor': 'end', 'dominant-baseline': 'middle' },
        format(value),
      ),
    );
  });
  const xTicks = (span === 0 ? [0] : [0, 0.5, 1]).map((fraction) =>
    svg(
      'text',
      {
        x: x(span * fraction),
        y: HEIGHT - MARGIN.bottom + 18,
        'text-anchor': span === 0 ? 'middle' : ['start', 'middle', 'end'][fraction * 2],
      },
      seconds(span * fraction),
    ),
  );
  const line = svg('polyline', {
    class: 'line',
    points: points.map((point) => `${x(point.t).toFixed(1)},${y(point.v).toFixed(1)}`).join(' '),
  });
  // Dots carry each sample's value as a tooltip; beyond a few hundred they would only be noise.
  const dots =
    points.length > 300
      ? []
      : points.map((point) =>
          svg(
            'circle',
            { class: 'dot', cx: x(point.t).toFixed(1), cy: y(point.v).toFixed(1), r: 3 },
            svg('title', {}, `${seconds(point.t)}: ${format(point.v)}`),
          ),
        );

  return svg(
    'svg',
    {
      class: 'chart',
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: 'img',
      'aria-labelledby': `${id}-title ${id}-desc`,
      preserveAspectRatio: 'xMidYMid meet',
    },
    svg('title', { id: `${id}-title` }, title),
    svg(
      'desc',
      { id: `${id}-desc` },
      `${points.length} sample${points.length === 1 ? '' : 's'} over ${seconds(span)}; peak ${format(peak)}, average ${format(average)}.`,
    ),
    ...grid,
    svg('line', { class: 'axis', x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: MARGIN.top + innerHeight }),
    svg('line', {
      class: 'axis',
      x1: MARGIN.left,
      x2: WIDTH - MARGIN.right,
      y1: MARGIN.top + innerHeight,
      y2: MARGIN.top + innerHeight,
    }),
    ...xTicks,
    svg(
      'text',
      { class: 'axis-label', x: MARGIN.left + innerWidth / 2, y: HEIGHT - 6, 'text-anchor': 'middle' },
      'Time since the first sample',
    ),
    svg(
      'text',
      {
        class: 'axis-label',
        x: 14,
        y: MARGIN.top + innerHeight / 2,
        'text-anchor': 'middle',
        transform: `rotate(-90 14 ${MARGIN.top + innerHeight / 2})`,
      },
      yLabel,
    ),
    line,
    ...dots,
  );
}
