// Tiles as SVG: pips drawn as pips, faces up or down. Every face-up tile is an element
// with `data-tile="a-b"` (a <= b) and an `aria-label`; a face-down one carries no value.

import { bounds } from './geometry.mjs';

const SVG = 'http://www.w3.org/2000/svg';

export function svg(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

// Pip spots in a unit square: the 3 x 3 grid of real dominoes up to 9, a 3 x 5 grid for
// the larger sets' 10 to 15.
const G3 = [0.25, 0.5, 0.75];
const P = (c, r) => [G3[c], G3[r]];
const SMALL = [
  [],
  [P(1, 1)],
  [P(0, 0), P(2, 2)],
  [P(0, 0), P(1, 1), P(2, 2)],
  [P(0, 0), P(2, 0), P(0, 2), P(2, 2)],
  [P(0, 0), P(2, 0), P(1, 1), P(0, 2), P(2, 2)],
  [P(0, 0), P(2, 0), P(0, 1), P(2, 1), P(0, 2), P(2, 2)],
  [P(0, 0), P(2, 0), P(0, 1), P(1, 1), P(2, 1), P(0, 2), P(2, 2)],
  [P(0, 0), P(1, 0), P(2, 0), P(0, 1), P(2, 1), P(0, 2), P(1, 2), P(2, 2)],
  [P(0, 0), P(1, 0), P(2, 0), P(0, 1), P(1, 1), P(2, 1), P(0, 2), P(1, 2), P(2, 2)],
];
const COLS5 = [0.24, 0.5, 0.76];
const ROWS5 = [0.15, 0.325, 0.5, 0.675, 0.85];
function large(n) {
  const spots = [];
  for (const r of ROWS5) spots.push([COLS5[0], r], [COLS5[2], r]); // 10
  const middle = { 10: [], 11: [2], 12: [1, 3], 13: [1, 2, 3], 14: [0, 1, 3, 4], 15: [0, 1, 2, 3, 4] }[n];
  for (const r of middle) spots.push([COLS5[1], ROWS5[r]]);
  return spots;
}

export function pipSpots(n) {
  return n <= 9 ? SMALL[n] : large(n);
}

/** The pips of `n` in the unit square at (x, y). */
function pips(group, n, x, y) {
  // As large as the grid allows (8 and 9 fill it): a pip must read on a phone's 1x screen.
  const r = n <= 9 ? 0.105 : 0.072;
  for (const [px, py] of pipSpots(n)) {
    group.append(svg('circle', { cx: x + px, cy: y + py, r, class: `pip pip-${n}` }));
  }
}

export const tileLabel = (a, b) => (a === b ? `double ${a}` : `${a}–${b}`);

/**
 * A face-up tile in a layout's units: `rect` its box, `halves` its two unit squares with
 * their pips.
 */
export function tileGroup({ rect, halves, tile }) {
  const [a, b] = tile.split('-').map(Number);
  const g = svg('g', { class: 'tile', 'data-tile': tile, role: 'img', 'aria-label': tileLabel(a, b) });
  const inset = 0.04;
  g.append(
    svg('rect', {
      x: rect.x0 + inset,
      y: rect.y0 + inset,
      width: rect.x1 - rect.x0 - 2 * inset,
      height: rect.y1 - rect.y0 - 2 * inset,
      rx: 0.14,
      class: 'face',
    }),
  );
  const [h0, h1] = halves;
  // The bar between the halves.
  if (h0.x === h1.x) {
    const y = Math.max(h0.y, h1.y);
    g.append(svg('line', { x1: h0.x + 0.18, x2: h0.x + 0.82, y1: y, y2: y, class: 'bar' }));
  } else {
    const x = Math.max(h0.x, h1.x);
    g.append(svg('line', { x1: x, x2: x, y1: h0.y + 0.18, y2: h0.y + 0.82, class: 'bar' }));
  }
  for (const h of halves) pips(g, h.pips, h.x, h.y);
  return g;
}

/** A standalone face-up tile (hands, revealed hands): an <svg> holding one tile. */
export function tileSvg(text, { upright = true } = {}) {
  const [a, b] = text.split('-').map(Number);
  const [lo, hi] = a <= b ? [a, b] : [b, a];
  const halves = upright
    ? [{ x: 0, y: 0, pips: lo }, { x: 0, y: 1, pips: hi }]
    : [{ x: 0, y: 0, pips: lo }, { x: 1, y: 0, pips: hi }];
  const rect = upright ? { x0: 0, y0: 0, x1: 1, y1: 2 } : { x0: 0, y0: 0, x1: 2, y1: 1 };
  const el = svg('svg', { viewBox: `0 0 ${rect.x1} ${rect.y1}`, class: upright ? 'tile-svg upright' : 'tile-svg flat', 'aria-hidden': 'true' });
  const g = tileGroup({ rect, halves, tile: `${lo}-${hi}` });
  // The element that names the tile is the caller's (a button, a list item).
  g.removeAttribute('data-tile');
  g.removeAttribute('role');
  g.removeAttribute('aria-label');
  el.append(g);
  return el;
}

/** A face-down tile: no value, anywhere. */
export function backTile() {
  const el = document.createElement('span');
  el.className = 'back';
  el.setAttribute('aria-hidden', 'true');
  return el;
}

/**
 * The layout as one <svg>: `fitted` from the geometry ({hw, hh, tiles}); `ends` marks the
 * open ends ({end, value}) at the chains' tips.
 */
export function layoutSvg(fitted, { ends = [], tips = {} } = {}) {
  const box = bounds(fitted.tiles);
  const margin = 0.9;
  const x0 = -fitted.hw - margin;
  const width = 2 * fitted.hw + 2 * margin;
  const y0 = Math.min(box.y0, -1.5) - margin;
  const height = Math.max(box.y1, 1.5) + margin - y0;
  const root = svg('svg', {
    viewBox: `${x0} ${y0} ${width} ${height}`,
    class: 'layout',
    role: 'group',
    'aria-label': 'The layout',
    preserveAspectRatio: 'xMidYMid meet',
  });
  const shadow = svg('g', { class: 'shadows', 'aria-hidden': 'true' });
  for (const t of fitted.tiles) {
    shadow.append(svg('rect', { x: t.rect.x0 + 0.1, y: t.rect.y0 + 0.12, width: t.rect.x1 - t.rect.x0 - 0.08, height: t.rect.y1 - t.rect.y0 - 0.08, rx: 0.14 }));
  }
  root.append(shadow);
  for (const t of fitted.tiles) root.append(tileGroup(t));
  for (const { end, value } of ends) {
    const at = tips[end];
    if (!at) continue;
    const g = svg('g', { class: 'end-mark', 'aria-hidden': 'true' });
    g.append(svg('circle', { cx: at.x, cy: at.y, r: 0.34 }));
    const text = svg('text', { x: at.x, y: at.y + 0.13, 'text-anchor': 'middle' });
    text.textContent = String(value);
    g.append(text);
    root.append(g);
  }
  return root;
}
