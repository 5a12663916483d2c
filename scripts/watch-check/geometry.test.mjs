// The watch page's layout geometry: for layouts played out at random under every preset's
// layout rules (a spinner or none, a lead or a start tile) with double-6 to double-15
// sets, in frames shaped like a phone and like a wide screen, no two tiles overlap, every
// tile lies inside the frame, each tile touches the one it was played onto, and a line
// too long for the frame bends.
// Run: node --test scripts/watch-check/
import test from 'node:test';
import assert from 'node:assert/strict';

import { fitTable, placeTable } from '../../src/api/watch/geometry.mjs';
import { LayoutBuilder, canonical, findSpinner, tableOf } from '../../src/api/watch/table.mjs';

// A small seeded generator, so a failure can be replayed.
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function set(maxPip) {
  const tiles = [];
  for (let a = 0; a <= maxPip; a++) for (let b = a; b <= maxPip; b++) tiles.push(`${a}-${b}`);
  return tiles;
}

/** A layout grown by random legal plays until `target` tiles lie or nothing fits. */
function randomLayout(maxPip, spinner, startTile, random, target) {
  const builder = new LayoutBuilder({ spinner });
  let stock = set(maxPip);
  const take = (i) => stock.splice(i, 1)[0];
  if (startTile) {
    const singles = stock.map((t, i) => [t, i]).filter(([t]) => t.split('-')[0] !== t.split('-')[1]);
    builder.play(take(singles[Math.floor(random() * singles.length)][1]));
  } else {
    builder.play(take(Math.floor(random() * stock.length)));
  }
  while (builder.arms.left.length + builder.arms.right.length + builder.arms.up.length + builder.arms.down.length + 1 < target) {
    const options = [];
    stock.forEach((t, i) => builder.fits(t).forEach((end) => options.push([i, end])));
    if (!options.length) break;
    const [i, end] = options[Math.floor(random() * options.length)];
    builder.play(take(i), end);
  }
  return builder;
}

const overlaps = (a, b) => a.x0 < b.x1 - 1e-9 && b.x0 < a.x1 - 1e-9 && a.y0 < b.y1 - 1e-9 && b.y0 < a.y1 - 1e-9;
const square = (h) => ({ x0: h.x, y0: h.y, x1: h.x + 1, y1: h.y + 1 });
/** Two boxes share an edge of positive length. */
function touch(a, b) {
  const xOverlap = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  const yOverlap = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  const eq = (p, q) => Math.abs(p - q) < 1e-9;
  return (xOverlap > 1e-9 && (eq(a.y1, b.y0) || eq(b.y1, a.y0))) || (yOverlap > 1e-9 && (eq(a.x1, b.x0) || eq(b.x1, a.x0)));
}

function check(placed, hw, hh, label) {
  for (const [i, t] of placed.entries()) {
    const r = t.rect;
    assert.ok(r.x0 >= -hw - 1e-9 && r.x1 <= hw + 1e-9 && r.y0 >= -hh - 1e-9 && r.y1 <= hh + 1e-9,
      `${label}: ${t.tile} (${t.chain} #${t.index}) leaves the ${2 * hw} x ${2 * hh} frame: ${JSON.stringify(r)}`);
    for (const u of placed.slice(i + 1)) {
      assert.ok(!overlaps(r, u.rect), `${label}: ${t.tile} (${t.chain} #${t.index}) overlaps ${u.tile} (${u.chain} #${u.index})`);
    }
  }
  // Each tile touches, with its near half, the far half of the tile it was played onto.
  const byChain = {};
  for (const t of placed) (byChain[t.chain] ??= []).push(t);
  const root = byChain.root[0];
  for (const [chain, tiles] of Object.entries(byChain)) {
    if (chain === 'root') continue;
    tiles.forEach((t, i) => {
      const prev = i === 0 ? root : tiles[i - 1];
      const near = square(t.halves[0]);
      const prevSquares = i === 0 || prev.double ? prev.halves.map(square) : [square(prev.halves[1])];
      assert.ok(prevSquares.some((s) => touch(s, t.rect) || touch(s, near)),
        `${label}: ${t.tile} (${chain} #${i}) does not touch ${prev.tile}`);
      assert.equal(t.halves[0].pips, i === 0 ? t.near : prev.far, `${label}: ${chain} #${i} matches`);
    });
  }
}

const PRESETS = [
  { name: 'classic, block, draw', spinner: 'none', startTile: false },
  { name: 'all_fives, muggins', spinner: 'first_double', startTile: false },
  { name: 'penalty', spinner: 'none', startTile: true },
];
// Frames in tile halves, as the page picks them: a phone's and a wide screen's.
const FRAMES = [
  { name: '390 px', hw: 6, hh: 8 },
  { name: '1920 px', hw: 24, hh: 10 },
];

for (const maxPip of [6, 9, 12, 15]) {
  for (const preset of PRESETS) {
    test(`double-${maxPip} layouts under ${preset.name} fit their frame without overlapping`, () => {
      const random = rng(maxPip * 1000 + preset.name.length);
      const size = set(maxPip).length;
      for (let round = 0; round < 40; round++) {
        const target = 2 + Math.floor(random() * size);
        const builder = randomLayout(maxPip, preset.spinner, preset.startTile, random, target);
        const layout = builder.layout;
        const spinner = findSpinner(layout, { spinner: preset.spinner }, builder.doubles);
        assert.deepEqual(spinner, builder.spinner, 'the spinner is found from the order doubles were played');
        const table = tableOf(layout, spinner);
        const count = Object.values(table.chains).reduce((n, c) => n + c.length, 1);
        assert.equal(count, 1 + ['left', 'right', 'up', 'down'].reduce((n, a) => n + layout.arms[a].length, 0));
        for (const frame of FRAMES) {
          const fitted = fitTable(table, frame.hw, frame.hh);
          assert.equal(fitted.tiles.length, count);
          check(fitted.tiles, fitted.hw, fitted.hh, `double-${maxPip} ${preset.name} round ${round} at ${frame.name}`);
          const tiles = fitted.tiles.map((t) => t.tile).sort();
          const want = [layout.lead, ...Object.values(layout.arms).flat()].map(canonical).sort();
          assert.deepEqual(tiles, want, 'every tile of the layout is placed once');
        }
      }
    });
  }
}

test('a line longer than the frame is wide bends inside it rather than growing the frame', () => {
  // 13 tiles east of a lead: 26 halves, in a frame 16 halves wide.
  const east = [];
  let v = 6;
  for (let i = 0; i < 13; i++) {
    const next = (v + 1) % 7 === 6 ? 0 : (v + 1) % 7;
    east.push({ near: v, far: next, double: false, tile: canonical(`${v}-${next}`) });
    v = next;
  }
  const table = { root: { near: 5, far: 6, double: false, tile: '5-6' }, spinner: false, chains: { east } };
  const placed = placeTable(table, 8, 10);
  assert.ok(placed, 'it fits the frame as given');
  check(placed, 8, 10, 'bent line');
  const upright = placed.filter((t) => t.rect.y1 - t.rect.y0 === 2 && !t.double);
  assert.ok(upright.length >= 1, 'a corner tile turns the line');
  assert.ok(placed.some((t) => t.rect.y0 > 1), 'the line comes back on a lower row');
});

test('a frame too small for the layout is refused, and fitting grows it', () => {
  const east = Array.from({ length: 6 }, (_, i) => ({ near: i, far: i + 1, double: false, tile: `${i}-${i + 1}` }));
  const table = { root: { near: 0, far: 0, double: true, tile: '0-0' }, spinner: false, chains: { east } };
  assert.equal(placeTable(table, 3, 1), null);
  const fitted = fitTable(table, 3, 1);
  assert.ok(fitted.hw > 3 && fitted.hh > 1);
  check(fitted.tiles, fitted.hw, fitted.hh, 'grown frame');
});
