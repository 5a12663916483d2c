// Where each tile of a layout lies on the table: pure geometry, no DOM, so that the page
// and `node --test` load the same code.
//
// Units: a tile is 2 x 1 (a "half" is a 1 x 1 square). The root (the spinner, or the lead
// when there is none) sits at the origin; x grows to the right, y downwards. Four chains
// leave the root: east, west, north, south (the last two only from a spinner). Each chain
// runs straight until the frame's edge, then turns through one corner tile and comes back
// a row further out, like a line of dominoes laid along a table's edge. The chains turn as
// a pinwheel (east turns south, south west, west north, north east) and each keeps to its
// own quarter, so no two tiles can overlap. When a frame is too small, it grows.

/** A chain's local axes: `u` is where it starts out, `v` where it turns. */
const AXES = {
  east: { u: [1, 0], v: [0, 1] },
  south: { u: [0, 1], v: [-1, 0] },
  west: { u: [-1, 0], v: [0, -1] },
  north: { u: [0, -1], v: [1, 0] },
};

export const CHAINS = Object.keys(AXES);

/**
 * Places every tile of `table` in a frame of half-width `hw` and half-height `hh`, or
 * answers null when they do not fit.
 *
 * `table` = {root: {near, far, double}, spinner (the root is one), chains: {east: [...], west: [...], north, south}}
 * where each chain lists {near, far, double} from the root outwards (`near` faces the
 * root). The root's `near` is its west half.
 *
 * The answer lists {near, far, double, chain, index, rect: {x0, y0, x1, y1}, halves:
 * [{x, y, pips}, {x, y, pips}]} (halves as unit squares by their top-left corner), the
 * root first with chain "root".
 */
export function placeTable(table, hw, hh) {
  const placed = [];
  const root = table.root;
  if (!root) return placed;
  // A double lies crosswise: upright in the east-west line.
  const rootHalf = root.double ? { x: 0.5, y: 1 } : { x: 1, y: 0.5 };
  placed.push(rootPlacement(root, rootHalf));
  if (rootHalf.x > hw || rootHalf.y > hh) return null;
  const spinner = Boolean(table.spinner);
  for (const name of CHAINS) {
    const tiles = table.chains[name] ?? [];
    if (!tiles.length) continue;
    const horizontal = name === 'east' || name === 'west';
    const limits = {
      start: horizontal ? rootHalf.x : rootHalf.y,
      uMax: horizontal ? hw : hh,
      vMax: horizontal ? hh : hw,
      // Rows coming back stop short of the neighbouring chain's first column (a double
      // there is 2 wide) or, without one, at the far edge.
      uIn: spinner ? 1 : -(horizontal ? hw : hh),
    };
    const local = walkChain(tiles, limits);
    if (!local) return null;
    for (const [index, t] of local.entries()) placed.push(toTable(t, name, index));
  }
  return placed;
}

/**
 * The smallest frame, from `hw` x `hh` upwards with the same shape, that holds `table`,
 * and the tiles placed in it: {hw, hh, tiles}.
 */
export function fitTable(table, hw, hh) {
  for (let i = 0; i < 200; i++) {
    const tiles = placeTable(table, hw, hh);
    if (tiles) return { hw, hh, tiles };
    hw *= 1.1;
    hh *= 1.1;
  }
  throw new Error('no frame holds this layout');
}

/** The tiles' bounding box: {x0, y0, x1, y1}. */
export function bounds(tiles) {
  const box = { x0: 0, y0: 0, x1: 0, y1: 0 };
  for (const { rect } of tiles) {
    box.x0 = Math.min(box.x0, rect.x0);
    box.y0 = Math.min(box.y0, rect.y0);
    box.x1 = Math.max(box.x1, rect.x1);
    box.y1 = Math.max(box.y1, rect.y1);
  }
  return box;
}

function rootPlacement(root, half) {
  const rect = { x0: -half.x, y0: -half.y, x1: half.x, y1: half.y };
  const halves = root.double
    ? [{ x: -0.5, y: -1, pips: root.near }, { x: -0.5, y: 0, pips: root.far }]
    : [{ x: -1, y: -0.5, pips: root.near }, { x: 0, y: -0.5, pips: root.far }];
  return { ...root, chain: 'root', index: -1, rect, halves };
}

/**
 * Lays a chain out in its own axes: u outwards, v towards its turns. Answers each tile's
 * unit squares (near half, far half) as centres in (u, v), or null if the frame is too
 * small.
 */
function walkChain(tiles, { start, uMax, vMax, uIn }) {
  const out = [];
  // The open edge's centre, the way the line runs, and the last tile's shape.
  let p = [start, 0];
  let dir = [1, 0];
  let outward = true; // running +u (else -u, coming back)
  let last = null;
  for (const tile of tiles) {
    const crosswise = tile.double;
    const straight = shape(p, dir, crosswise);
    if (straight.v1 > vMax) return null; // a crosswise double on the last row
    const fits = outward ? straight.u1 <= uMax : straight.u0 >= uIn;
    if (fits) {
      out.push({ ...straight, tile });
      p = add(p, scale(dir, crosswise ? 1 : 2));
      last = { crosswise };
      continue;
    }
    if (last === null) return null; // not even the first tile fits
    // The corner: from the last tile's far half, one tile (never crosswise) along +v.
    const turn = [0, 1];
    const from = add(add(p, scale(dir, -0.5)), scale(turn, last.crosswise ? 1 : 0.5));
    const corner = shape(from, turn, false);
    if (corner.v1 > vMax) return null;
    out.push({ ...corner, tile });
    // Back the other way, a row further out.
    const end = add(from, [0, 2]);
    dir = outward ? [-1, 0] : [1, 0];
    outward = !outward;
    p = add(add(end, [0, -0.5]), scale(dir, 0.5));
    last = { crosswise: false };
    // The next row must hold at least one tile.
    const room = outward ? uMax - p[0] : p[0] - uIn;
    if (room < 2 && tile !== tiles[tiles.length - 1]) return null;
  }
  return out;
}

/** A tile laid from edge point `p` along `dir`: its box in (u, v) and its halves' centres. */
function shape(p, dir, crosswise) {
  const across = [-dir[1], dir[0]];
  let a, b;
  if (crosswise) {
    const mid = add(p, scale(dir, 0.5));
    a = add(mid, scale(across, -0.5));
    b = add(mid, scale(across, 0.5));
  } else {
    a = add(p, scale(dir, 0.5));
    b = add(p, scale(dir, 1.5));
  }
  return {
    centres: [a, b],
    u0: Math.min(a[0], b[0]) - 0.5,
    u1: Math.max(a[0], b[0]) + 0.5,
    v0: Math.min(a[1], b[1]) - 0.5,
    v1: Math.max(a[1], b[1]) + 0.5,
  };
}

function toTable(t, chain, index) {
  const { u, v } = AXES[chain];
  const at = ([cu, cv]) => [cu * u[0] + cv * v[0], cu * u[1] + cv * v[1]];
  const [a, b] = t.centres.map(at);
  const rect = {
    x0: Math.min(a[0], b[0]) - 0.5,
    y0: Math.min(a[1], b[1]) - 0.5,
    x1: Math.max(a[0], b[0]) + 0.5,
    y1: Math.max(a[1], b[1]) + 0.5,
  };
  const halves = [
    { x: a[0] - 0.5, y: a[1] - 0.5, pips: t.tile.near },
    { x: b[0] - 0.5, y: b[1] - 0.5, pips: t.tile.far },
  ];
  return { ...t.tile, chain, index, rect, halves };
}

const add = (a, b) => [a[0] + b[0], a[1] + b[1]];
const scale = (a, k) => [a[0] * k, a[1] * k];

const centre = (r) => [(r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2];

/**
 * Where to mark each open end: just beyond the tip of its chain, by end name (the right
 * end is always the east chain's tip, left west, up north, down south).
 */
export function tipsOf(tiles) {
  const byChain = { root: [], east: [], west: [], north: [], south: [] };
  for (const t of tiles) byChain[t.chain]?.push(t);
  const root = byChain.root[0];
  if (!root) return {};
  const names = { east: 'right', west: 'left', north: 'up', south: 'down' };
  const tips = {};
  for (const [chain, end] of Object.entries(names)) {
    const list = byChain[chain];
    const tip = list.length ? list[list.length - 1] : root;
    const before = list.length > 1 ? list[list.length - 2] : root;
    let dir;
    if (tip === root) dir = AXES[chain].u;
    else {
      const [a, b] = [centre(before.rect), centre(tip.rect)];
      const len = Math.hypot(b[0] - a[0], b[1] - a[1]);
      dir = [(b[0] - a[0]) / len, (b[1] - a[1]) / len];
    }
    const [cx, cy] = centre(tip.rect);
    const ext = Math.abs(dir[0]) * (tip.rect.x1 - tip.rect.x0) / 2 + Math.abs(dir[1]) * (tip.rect.y1 - tip.rect.y0) / 2;
    tips[end] = { x: cx + dir[0] * (ext + 0.45), y: cy + dir[1] * (ext + 0.45) };
  }
  return tips;
}
