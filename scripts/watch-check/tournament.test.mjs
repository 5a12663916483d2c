// A tournament's stream sends the whole tournament once, then only what changed: the page
// must rebuild the same table the server would show, or a follower sees standings that
// never were.
// Run: node --test scripts/watch-check/
import test from 'node:test';
import assert from 'node:assert/strict';

import { applyTournamentEvent } from '../../src/api/watch/api.mjs';

const row = (id, entry, score, buchholz = 0, sb = 0, margin = 0) => ({
  id,
  name: id,
  bot: true,
  score,
  buchholz,
  sonneborn_berger: sb,
  margin,
  withdrawn: false,
  rank: 0,
  entry,
});

const whole = {
  status: 'running',
  round: 1,
  waiting: null,
  players: [row('ann', 0, 0), row('bob', 1, 0), row('cy', 2, 0)].map((p, i) => ({ ...p, rank: i + 1 })),
  pairings: [{ round: 1, a: 'ann', b: 'bob', games: ['g1', 'g2'], result: null }],
  byes: [{ round: 1, player: 'cy' }],
};

test('the first event is the whole tournament', () => {
  const t = applyTournamentEvent(null, { type: 'standings', tournament: whole });
  assert.equal(t, whole);
});

test('a finished pairing and the changed lines rank everyone again', () => {
  const finished = { round: 1, a: 'ann', b: 'bob', games: ['g1', 'g2'], result: 'b' };
  const t = applyTournamentEvent(whole, {
    type: 'pairing_finished',
    status: 'running',
    round: 1,
    waiting: null,
    tournament: null,
    pairing: finished,
    pairings: [finished],
    byes: [],
    players: [row('bob', 1, 1, 0, 0, 40), row('ann', 0, 0, 1, 0, -40)],
  });
  assert.deepEqual(t.pairings, [finished]);
  // cy's bye (1 point, entered third) ties bob's win: the tiebreaks put bob first.
  const withBye = applyTournamentEvent(t, {
    type: 'standings',
    status: 'running',
    round: 1,
    waiting: null,
    tournament: null,
    pairing: null,
    pairings: [],
    byes: [],
    players: [row('cy', 2, 1)],
  });
  assert.deepEqual(
    withBye.players.map((p) => [p.id, p.rank]),
    [
      ['bob', 1],
      ['cy', 2],
      ['ann', 3],
    ],
  );
});

test('a new round adds its pairings and byes, and says why it waits', () => {
  const next = { round: 2, a: 'cy', b: 'ann', games: ['g3', 'g4'], result: null };
  const waiting = { since_ms: 5, reason: 'the store is full' };
  const t = applyTournamentEvent(whole, {
    type: 'round_started',
    status: 'running',
    round: 2,
    waiting,
    tournament: null,
    pairing: null,
    pairings: [next],
    byes: [{ round: 2, player: 'bob' }],
    players: [],
  });
  assert.equal(t.round, 2);
  assert.deepEqual(t.waiting, waiting);
  assert.equal(t.pairings.length, 2);
  assert.deepEqual(t.byes.at(-1), { round: 2, player: 'bob' });
});
