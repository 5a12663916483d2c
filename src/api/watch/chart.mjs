// A rating over time, drawn by the page itself as SVG: the rating as a line through each
// rated game's point, placed by when it was played, its deviation as a band around it
// (rating ± deviation), with round values up the side and dates along the bottom.

const SVG = 'http://www.w3.org/2000/svg';
const PAD = { left: 44, right: 12, top: 10, bottom: 24 };

/** Steps a scale may take: 1, 2, 2.5 and 5 times a power of ten. */
function niceStep(span, most) {
  const rough = span / Math.max(1, most);
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
}

/** Round values from below `lo` to above `hi`, at most about `most` steps apart. */
export function valueTicks(lo, hi, most = 4) {
  const step = niceStep(Math.max(hi - lo, 1), most);
  const first = Math.floor(lo / step) * step;
  const ticks = [];
  for (let v = first; v <= hi + step / 2 && ticks.length < 50; v += step) ticks.push(Math.round(v * 100) / 100);
  if (ticks[ticks.length - 1] < hi) ticks.push(ticks[ticks.length - 1] + step);
  return ticks;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TIME_STEPS = [MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY];

/** Round instants within [from, to] (whole minutes, hours or days), at most `most`. */
export function timeTicks(from, to, most = 4) {
  const step = TIME_STEPS.find((s) => (to - from) / s <= most) ?? 365 * DAY;
  // Days and longer fall on local midnights; shorter steps on round UTC minutes.
  const offset = step >= DAY ? new Date(from).getTimezoneOffset() * MINUTE : 0;
  const ticks = [];
  for (let t = Math.ceil((from + offset) / step) * step - offset; t <= to; t += step) ticks.push(t);
  return { step, ticks };
}

/**
 * The chart's shapes in a `width` x `height` box: each point at its time (`at_ms`) left to
 * right, the vertical scale fitted to round values around the band.
 */
export function chartGeometry(points, width = 600, height = 200) {
  if (!points.length) return null;
  const lows = points.map((p) => p.rating - p.deviation);
  const highs = points.map((p) => p.rating + p.deviation);
  const ticks = valueTicks(Math.min(...lows), Math.max(...highs));
  const lo = ticks[0];
  const hi = ticks[ticks.length - 1];
  const from = points[0].at_ms;
  const to = points[points.length - 1].at_ms;
  const inner = width - PAD.left - PAD.right;
  const x = (ms) => (to > from ? PAD.left + ((ms - from) * inner) / (to - from) : PAD.left + inner / 2);
  const y = (v) => PAD.top + ((hi - v) * (height - PAD.top - PAD.bottom)) / (hi - lo);
  const round = (v) => Math.round(v * 10) / 10;
  const line = points.map((p) => [round(x(p.at_ms)), round(y(p.rating))]);
  const upper = points.map((p) => [round(x(p.at_ms)), round(y(p.rating + p.deviation))]);
  const lower = points.map((p) => [round(x(p.at_ms)), round(y(p.rating - p.deviation))]).reverse();
  const times = to > from ? timeTicks(from, to) : { step: DAY, ticks: [from] };
  // Games minutes apart may span no round instant: the first one's time is the axis then.
  if (!times.ticks.length) times.ticks = [from];
  return {
    line,
    band: [...upper, ...lower],
    values: ticks.map((v) => ({ value: v, y: round(y(v)) })),
    times: times.ticks.map((t) => ({ ms: t, x: round(x(t)) })),
    timeStep: times.step,
  };
}

function el(name, attrs = {}) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

const pairs = (pts) => pts.map(([a, b]) => `${a},${b}`).join(' ');

function timeLabel(ms, step) {
  const options = step >= DAY ? { month: 'short', day: 'numeric' } : { hour: '2-digit', minute: '2-digit' };
  return new Date(ms).toLocaleString(undefined, options);
}

/** An SVG chart of `points` ({at_ms, rating, deviation, label}), labelled `title`. */
export function drawChart(points, title) {
  const width = 600;
  const height = 200;
  const g = chartGeometry(points, width, height);
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'data-points': points.length });
  const label = el('title');
  label.textContent = title;
  svg.append(label);
  if (!g) return svg;
  for (const { value, y } of g.values) {
    svg.append(el('line', { class: 'grid', x1: PAD.left, x2: width - PAD.right, y1: y, y2: y }));
    const text = el('text', { class: 'axis value', x: PAD.left - 6, y: y + 4, 'text-anchor': 'end' });
    text.textContent = String(value);
    svg.append(text);
  }
  for (const { ms, x } of g.times) {
    svg.append(el('line', { class: 'grid', x1: x, x2: x, y1: PAD.top, y2: height - PAD.bottom }));
    const text = el('text', { class: 'axis time', x, y: height - 6, 'text-anchor': 'middle', 'data-ms': ms });
    text.textContent = timeLabel(ms, g.timeStep);
    svg.append(text);
  }
  svg.append(el('polygon', { class: 'rating-band', points: pairs(g.band) }));
  if (g.line.length > 1) svg.append(el('polyline', { class: 'rating-line', points: pairs(g.line) }));
  g.line.forEach(([cx, cy], i) => {
    const dot = el('circle', { class: 'rating-point', cx, cy, r: 3.5 });
    const tip = el('title');
    tip.textContent = points[i].label;
    dot.append(tip);
    svg.append(dot);
  });
  return svg;
}
