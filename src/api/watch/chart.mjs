// A rating over time, drawn by the page itself as SVG: the rating as a line through each
// rated game's point, its deviation as a band around it (rating ± deviation).

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The chart's shapes in a `width` x `height` box: points evenly spaced left to right
 * (one per rated game, oldest first), the vertical scale fitted to the band.
 */
export function chartGeometry(points, width = 600, height = 200, pad = 28) {
  if (!points.length) return null;
  const lows = points.map((p) => p.rating - p.deviation);
  const highs = points.map((p) => p.rating + p.deviation);
  let lo = Math.min(...lows);
  let hi = Math.max(...highs);
  if (hi - lo < 1) { lo -= 1; hi += 1; }
  const x = (i) => (points.length === 1 ? width / 2 : pad + (i * (width - 2 * pad)) / (points.length - 1));
  const y = (v) => pad / 2 + ((hi - v) * (height - pad)) / (hi - lo);
  const round = (v) => Math.round(v * 10) / 10;
  const line = points.map((p, i) => [round(x(i)), round(y(p.rating))]);
  const upper = points.map((p, i) => [round(x(i)), round(y(p.rating + p.deviation))]);
  const lower = points.map((p, i) => [round(x(i)), round(y(p.rating - p.deviation))]).reverse();
  return { line, band: [...upper, ...lower], lo: Math.round(lo), hi: Math.round(hi) };
}

function el(name, attrs = {}) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

const pairs = (pts) => pts.map(([a, b]) => `${a},${b}`).join(' ');

/** An SVG chart of `points` ({rating, deviation, label}), labelled `title`. */
export function drawChart(points, title) {
  const width = 600;
  const height = 200;
  const g = chartGeometry(points, width, height);
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'data-points': points.length });
  const label = el('title');
  label.textContent = title;
  svg.append(label);
  if (!g) return svg;
  svg.append(el('polygon', { class: 'rating-band', points: pairs(g.band) }));
  if (g.line.length > 1) svg.append(el('polyline', { class: 'rating-line', points: pairs(g.line) }));
  g.line.forEach(([cx, cy], i) => {
    const dot = el('circle', { class: 'rating-point', cx, cy, r: 3.5 });
    const tip = el('title');
    tip.textContent = points[i].label;
    dot.append(tip);
    svg.append(dot);
  });
  for (const [value, yPos] of [[g.hi, 12], [g.lo, height - 4]]) {
    const text = el('text', { class: 'axis', x: 2, y: yPos });
    text.textContent = String(value);
    svg.append(text);
  }
  return svg;
}
