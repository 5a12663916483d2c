// What the list pages compute without a browser: a player's own score first whichever
// seat it sat in, levels named alike everywhere, and the rating chart's round values and
// time axis.
// Run: node --test scripts/watch-check/
import test from 'node:test';
import assert from 'node:assert/strict';

import { ownResult } from '../../src/api/watch/lists.mjs';
import { levelOf, shownName } from '../../src/api/watch/names.mjs';
import { chartGeometry, timeTicks, valueTicks } from '../../src/api/watch/chart.mjs';

const game = (seat, scores, outcome, extra = {}) => ({
  seat, scores, outcome, status: 'finished', names: scores.map((_, i) => `p${i}`), ...extra,
});

test('a player in seat 1 reads its own score first', () => {
  assert.equal(ownResult(game(1, [50, 100], 'won')).text, 'won 100 – 50');
  assert.equal(ownResult(game(1, [35, 5], 'lost')).text, 'lost 5 – 35');
  assert.equal(ownResult(game(0, [100, 50], 'won')).text, 'won 100 – 50');
});

test('at three seats its score comes first, the others after in seat order', () => {
  assert.equal(ownResult(game(2, [10, 20, 30], 'won')).text, 'won 30 – 10 – 20');
});

test('in a team game a seat reads its team\'s score first', () => {
  const teams = { names: ['a', 'b', 'c', 'd'] };
  assert.equal(ownResult(game(3, [61, 90], 'won', teams)).text, 'won 90 – 61');
  assert.equal(ownResult(game(2, [61, 90], 'lost', teams)).text, 'lost 61 – 90');
});

test('a game in play says so, with its score so far', () => {
  assert.equal(ownResult({ ...game(1, [5, 10], null), status: 'playing' }).text, 'in play 10 – 5');
});

test('a level is named by its level on every page, a person by its name', () => {
  assert.equal(shownName('greedy bot'), 'greedy');
  assert.equal(levelOf('master bot'), 'master');
  assert.equal(shownName('ann'), 'ann');
  assert.equal(levelOf('greedy'), null);
  assert.equal(levelOf('greedy bots'), null);
});

test('the chart\'s values are round, and cover the band', () => {
  const ticks = valueTicks(1150, 1923);
  assert.deepEqual(ticks, [1000, 1200, 1400, 1600, 1800, 2000]);
  for (const [lo, hi] of [[1490, 1510], [800, 2200], [1499.5, 1500.5]]) {
    const t = valueTicks(lo, hi);
    const step = t[1] - t[0];
    assert.ok(t[0] <= lo && t[t.length - 1] >= hi, `${t} covers ${lo} to ${hi}`);
    assert.ok(t.every((v) => Number.isInteger(Math.round(v / step * 1e6) / 1e6)), `${t} are multiples of ${step}`);
    assert.ok([1, 2, 2.5, 5].some((m) => Math.abs(step / 10 ** Math.floor(Math.log10(step)) - m) < 1e-9), `step ${step}`);
  }
});

test('the time axis falls on round instants inside the span, a few of them', () => {
  const from = Date.UTC(2026, 10, 28, 10, 3, 17);
  const { step, ticks } = timeTicks(from, from + 7 * 60_000);
  assert.equal(step, 5 * 60_000);
  assert.ok(ticks.length >= 1 && ticks.length <= 4 && ticks.every((t) => t >= from && t <= from + 7 * 60_000 && t % step === 0));
  const days = timeTicks(from, from + 3 * 86_400_000);
  assert.equal(days.step, 86_400_000);
  assert.ok(days.ticks.every((t) => new Date(t).getHours() === 0 && new Date(t).getMinutes() === 0), 'local midnights');
});

test('points are placed by when they were played', () => {
  const t = Date.UTC(2026, 0, 1);
  const g = chartGeometry([
    { at_ms: t, rating: 1500, deviation: 350 },
    { at_ms: t + 1000, rating: 1600, deviation: 300 },
    { at_ms: t + 10_000, rating: 1650, deviation: 250 },
  ]);
  const [a, b, c] = g.line.map(([x]) => x);
  assert.ok(Math.abs((b - a) * 10 - (c - a)) < 1, `${a}, ${b}, ${c}: one second, then nine more`);
  assert.ok(g.values.length >= 3 && g.times.length >= 1);
});
