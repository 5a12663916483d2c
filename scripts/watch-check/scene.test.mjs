// The scene the game page draws, from a live view and from a finished game's export: a
// replay must hand every tile back to the hand it came from and end on the export's result,
// or the page shows a table that never was.
// Run: node --test scripts/watch-check/
import test from 'node:test';
import assert from 'node:assert/strict';

import { replaySteps, roundsOf, sceneOfView } from '../../src/api/watch/scene.mjs';

const rules = { spinner: 'none', teams: false, scoring: 'points' };

test('a waiting game is a scene with its seats and an empty table', () => {
  const view = {
    rules,
    preset: 'block',
    status: 'waiting',
    round: null,
    you: null,
    seats: [
      { seat: 0, name: 'ann', bot: null, team: null, hand_count: 0, abandoned: false },
      { seat: 1, name: null, bot: null, team: null, hand_count: 0, abandoned: false },
    ],
    scores: [0, 0],
    clock: null,
    last_round: null,
    result: null,
    hand: null,
    legal_moves: [],
  };
  const scene = sceneOfView(view, { start: [], entries: [] });
  assert.equal(scene.layout, null);
  assert.equal(scene.turn, null);
  assert.deepEqual(scene.seats.map((s) => s.name), ['ann', 'seat 1']);
  assert.deepEqual(scene.lines, []);
});

test('a replay steps through the deal, each move and the end, hands face up', () => {
  const exported = {
    rules,
    preset: 'block',
    seats: 2,
    names: ['ann', 'bob'],
    deals: [{ hands: [['6-6', '1-2'], ['6-3', '0-0']], boneyard: ['4-4', '2-5'] }],
  };
  const result = { winner: 0, scores: [3, 0], reason: 'target' };
  const log = {
    start: [{ type: 'round_started', round: 1, leader: 0 }],
    entries: [
      { seat: 0, events: [{ type: 'played', seat: 0, tile: '6-6' }] },
      { seat: 1, events: [{ type: 'played', seat: 1, tile: '3-6', end: 'right' }] },
      { seat: 0, events: [{ type: 'drew', seat: 0, tile: '4-4' }] },
      {
        seat: 0,
        events: [
          { type: 'passed', seat: 0 },
          { type: 'round_ended', result: { number: 1, reason: 'blocked', winner: 0, awards: [3, 0], scores: [3, 0] } },
          { type: 'match_ended', result },
        ],
      },
    ],
  };
  const steps = replaySteps(exported, log);
  // The deal, then one step a move.
  assert.equal(steps.length, 1 + log.entries.length);
  assert.deepEqual(steps[0].seats.map((s) => s.faceUp), [['6-6', '1-2'], ['6-3', '0-0']]);
  assert.equal(steps[0].boneyard, 2);
  assert.equal(steps[0].turn, 0);
  assert.deepEqual(steps[2].layout.arms.right, ['6-3']);
  assert.equal(steps[2].turn, 0);
  // The draw takes the named tile out of the boneyard into the hand.
  assert.deepEqual(steps[3].seats[0].faceUp, ['1-2', '4-4']);
  assert.equal(steps[3].boneyard, 1);
  const last = steps.at(-1);
  assert.deepEqual(last.result, result);
  assert.deepEqual(last.seats.map((s) => s.score), [3, 0]);
  assert.equal(last.turn, null);
  assert.ok(last.lines.some((l) => l.includes('wins the match')), last.lines.join('\n'));
  assert.deepEqual(last.rounds.map((r) => r.number), [1]);
  assert.deepEqual(steps[0].rounds, []);
});

test('every round\'s result comes from the log, not only the view\'s last one', () => {
  const ended = (number) => ({ type: 'round_ended', result: { number, reason: 'domino', winner: 0, hands: [[], []], awards: [5, 0], scores: [5 * number, 0] } });
  const log = {
    start: [{ type: 'round_started', round: 1, leader: 0 }],
    entries: [
      { seat: 0, events: [{ type: 'played', seat: 0, tile: '1-1' }, ended(1), { type: 'round_started', round: 2, leader: 1 }] },
      { seat: 1, events: [{ type: 'played', seat: 1, tile: '2-2' }, ended(2), { type: 'round_started', round: 3, leader: 0 }] },
    ],
  };
  assert.deepEqual(roundsOf(log, ended(2).result).map((r) => r.number), [1, 2]);
  // A view read after the log may know a round the log does not yet.
  assert.deepEqual(roundsOf(log, ended(3).result).map((r) => r.number), [1, 2, 3]);
  assert.deepEqual(roundsOf({ start: [], entries: [] }, null), []);
});
