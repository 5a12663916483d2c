// What several pages list alike: a game with its players, a tournament, a league.

import { nameNode } from './names.mjs';

export function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

/**
 * A player's game's result from its own side: how it went for it ("won", "lost", "drawn",
 * "in play", "over"), then its score first and the others' after, whichever seat it sat in
 * (by team in a team game: seats 0+2 against 1+3).
 */
export function ownResult(g) {
  const side = g.scores.length === g.names.length ? g.seat : g.seat % g.scores.length;
  const scores = [g.scores[side], ...g.scores.filter((_, i) => i !== side)];
  const how = g.outcome ?? (g.status === 'finished' ? 'over' : g.status === 'waiting' ? 'waiting' : 'in play');
  return { how, text: scores.length ? `${how} ${scores.join(' – ')}` : how };
}

/** Who sits at the table: each name, a player's or a level's linking to its page. */
function players(g) {
  const span = document.createElement('span');
  span.className = 'players';
  (g.names ?? []).forEach((name, seat) => {
    if (seat > 0) span.append(' · ');
    span.append(nameNode(name, g.player_ids?.[seat]));
  });
  return span;
}

/** A game: its preset linking to its table (`replay`: to its replay), its players. */
export function gameItem(g, what, { replay = false } = {}) {
  const li = document.createElement('li');
  li.dataset.game = g.game_id;
  const a = document.createElement('a');
  a.href = `/watch/${encodeURIComponent(g.game_id)}${replay ? '#replay' : ''}`;
  a.className = 'preset';
  a.textContent = g.preset.replace(/_/g, ' ');
  const seats = document.createElement('span');
  seats.className = 'seats-free';
  seats.textContent = what;
  const when = document.createElement('span');
  when.className = 'when';
  when.textContent = `opened ${ago(g.created_ms)}${g.prearranged ? ' · prearranged deal' : ''}`;
  li.append(a, players(g), seats, when);
  return li;
}


const FORMATS = { swiss: 'Swiss', round_robin: 'round robin' };
const presetName = (p) => p.replace(/_/g, ' ');

function span(text, className) {
  return Object.assign(document.createElement('span'), { className, textContent: text });
}

/**
 * A tournament: its name linking to its page, its format and preset, how many entered,
 * the round, and once finished who won (when the list carries the standings).
 */
export function tournamentItem(t) {
  const li = document.createElement('li');
  li.dataset.tournament = t.id;
  const a = document.createElement('a');
  a.href = `/tournaments/${encodeURIComponent(t.id)}`;
  a.className = 'tournament-name';
  a.textContent = t.name;
  const entrants = t.players_count ?? t.players?.length ?? 0;
  const what = [FORMATS[t.format] ?? t.format, presetName(t.preset), `${entrants} ${entrants === 1 ? 'player' : 'players'}`];
  if (t.status === 'running') what.push(`round ${t.round} of ${t.rounds}`);
  if (t.status === 'canceled') what.push('canceled');
  if (t.status === 'registering') what.push(`starts ${new Date(t.starts_at_ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}`);
  li.append(a, span(what.join(' · '), 'when'));
  const winner = t.status === 'finished' ? (t.winner ?? t.players?.find((p) => p.rank === 1)?.name) : null;
  if (winner) li.append(span(`won by ${winner}`, 'winner'));
  return li;
}

/** A league: its name linking to its page, its preset, how many are in it, matches counted. */
export function leagueItem(l) {
  const li = document.createElement('li');
  li.dataset.league = l.id;
  const a = document.createElement('a');
  a.href = `/leagues/${encodeURIComponent(l.id)}`;
  a.className = 'league-name';
  a.textContent = l.name;
  const what = [
    presetName(l.preset),
    `${l.entrants} ${l.entrants === 1 ? 'entrant' : 'entrants'}`,
    `${l.matches_counted} ${l.matches_counted === 1 ? 'match' : 'matches'} counted`,
  ];
  li.append(a, span(what.join(' · '), 'when'));
  return li;
}
