// The scene: everything the game page draws, as plain data, from a live view and its log
// or from a finished game's export, one step per move. Kept apart from the page so that
// it reads no DOM and `node --test` can run it.

import { levelOf } from './names.mjs';
import { LayoutBuilder, canonical, describeEvents, findSpinner, halves, seatName } from './table.mjs';

const sideOf = (rules, seat) => (rules?.teams ? seat % 2 : seat);

export function sceneOfView(view, log) {
  const round = view.round;
  const doubles = playedDoublesOfRound(log);
  return {
    rules: view.rules,
    preset: view.preset,
    status: view.status,
    roundNumber: round?.number ?? null,
    turn: view.status === 'playing' ? round?.turn ?? null : null,
    you: view.you,
    seats: view.seats.map((s) => ({
      seat: s.seat,
      name: seatName(view, s.seat),
      playerId: s.player_id ?? null,
      bot: s.bot,
      team: s.team,
      handCount: s.hand_count,
      faceUp: null,
      abandoned: s.abandoned,
      score: view.scores[sideOf(view.rules, s.seat)],
      bankMs: view.clock?.banks_ms?.[s.seat] ?? null,
    })),
    clock: view.clock,
    layout: round?.layout ?? null,
    spinner: round ? findSpinner(round.layout, view.rules, doubles) : null,
    boneyard: round?.boneyard_count ?? null,
    unclaimed: round?.unclaimed ?? null,
    lines: lastLines(view, log, 8),
    lastRound: view.last_round,
    rounds: roundsOf(log, view.last_round),
    result: view.result,
    hand: view.hand,
    legal: view.legal_moves ?? [],
    names: view,
  };
}

/**
 * Every finished round's result, first to last: the view carries only the last one, the
 * log all of them. A log read before the view (or cut short) may lack the view's last one,
 * which is added then.
 */
export function roundsOf(log, lastRound) {
  const rounds = [];
  const see = (e) => {
    if (e.type === 'round_ended' && e.result) rounds.push(e.result);
  };
  log.start.forEach(see);
  for (const entry of log.entries) entry.events.forEach(see);
  if (lastRound && !rounds.some((r) => r.number === lastRound.number)) rounds.push(lastRound);
  return rounds;
}

function playedDoublesOfRound(log) {
  let doubles = [];
  const see = (e) => {
    if (e.type === 'round_started') doubles = [];
    if (e.type === 'played' && halves(e.tile)[0] === halves(e.tile)[1]) doubles.push(e.tile);
  };
  log.start.forEach(see);
  for (const entry of log.entries) entry.events.forEach(see);
  return doubles;
}

function lastLines(view, log, n) {
  const lines = [];
  for (let i = log.entries.length - 1; i >= 0 && lines.length < n; i--) {
    const entry = log.entries[i];
    const words = describeEvents(view, entry.events);
    lines.unshift(...(words.length ? words : [`${seatName(view, entry.seat)}: ${entry.move?.type ?? 'moved'}`]));
  }
  if (lines.length < n) lines.unshift(...describeEvents(view, log.start));
  return lines.slice(-n);
}

/**
 * Every step of a finished game: the first round's deal, then one step per move, and one
 * more where a round ends, each with every hand face up.
 */
export function replaySteps(exported, log) {
  const rules = exported.rules;
  const seats = exported.seats;
  const names = { seats: exported.names.map((name, seat) => ({ seat, name, bot: levelOf(name) })), rules };
  const sides = rules.teams ? 2 : seats;
  const steps = [];
  let scores = Array(sides).fill(0);
  let hands = [];
  let boneyard = [];
  let builder = new LayoutBuilder(rules);
  let roundNumber = 1;
  let lastRound = null;
  let rounds = [];
  let result = null;
  const snapshot = (lines, turn) => {
    const layout = JSON.parse(JSON.stringify(builder.layout));
    steps.push({
      rules,
      preset: exported.preset,
      status: 'finished',
      roundNumber,
      turn,
      you: null,
      seats: hands.map((hand, seat) => ({
        seat,
        name: seatName(names, seat),
        playerId: exported.player_ids?.[seat] ?? null,
        bot: null,
        team: rules.teams ? seat % 2 : null,
        handCount: hand.length,
        faceUp: [...hand],
        abandoned: false,
        score: scores[sideOf(rules, seat)],
        bankMs: null,
      })),
      clock: null,
      layout,
      spinner: builder.spinner ? { ...builder.spinner } : null,
      boneyard: boneyard.length,
      unclaimed: null,
      lines,
      lastRound,
      rounds,
      result,
      hand: null,
      legal: [],
      names,
    });
  };
  const apply = (e) => {
    switch (e.type) {
      case 'round_started': {
        roundNumber = e.round;
        const deal = exported.deals[e.round - 1];
        hands = deal.hands.map((h) => [...h]);
        boneyard = [...deal.boneyard];
        builder = new LayoutBuilder(rules);
        if (e.start_tile) {
          boneyard.splice(boneyard.findIndex((t) => canonical(t) === canonical(e.start_tile)), 1);
          builder.play(e.start_tile);
        }
        break;
      }
      case 'played': {
        const hand = hands[e.seat];
        hand.splice(hand.findIndex((t) => canonical(t) === canonical(e.tile)), 1);
        builder.play(e.tile, e.end);
        if (e.credited && e.points) scores[sideOf(rules, e.seat)] += e.points;
        break;
      }
      case 'drew': {
        // The top of the boneyard (the deal lists it top first).
        const i = e.tile ? boneyard.findIndex((t) => canonical(t) === canonical(e.tile)) : 0;
        hands[e.seat].push(boneyard.splice(i, 1)[0]);
        break;
      }
      case 'muggins_taken':
        scores[sideOf(rules, e.seat)] += e.points;
        break;
      case 'round_ended':
        scores = [...e.result.scores];
        lastRound = e.result;
        // A new array, so that the steps before keep the rounds they had.
        rounds = [...rounds, e.result];
        break;
      case 'match_ended':
        result = e.result;
        scores = [...e.result.scores];
        break;
      default:
        break;
    }
  };
  log.start.forEach(apply);
  const entries = log.entries;
  snapshot(describeEvents(names, log.start), entries[0]?.seat ?? null);
  entries.forEach((entry, i) => {
    let lines = [];
    for (const e of entry.events) {
      if (e.type === 'round_started' && lines.length) {
        // The round's last layout, before the next deal.
        snapshot(lines, null);
        lines = [];
      }
      apply(e);
      lines.push(...describeEvents(names, [e]));
    }
    snapshot(lines, entries[i + 1]?.seat ?? null);
  });
  return steps;
}
