// A player's page: its ratings per preset, each with a chart of the rating over its
// latest rated games (deviation as a band), its games a page at a time (`?page=N`) with
// the opponents, its own score first and the rating change, each linking to its table or
// its replay, the leagues it is in (each linking to its page), its matches, and the
// tournaments it entered (each linking to its page).

import { readProfile, readRatingHistory, readPlayerGames, readPlayerMatches, readPlayerTournaments } from './api.mjs';
import { drawChart } from './chart.mjs';
import { ownResult, tournamentItem } from './lists.mjs';
import { nameNode } from './names.mjs';

const $ = (id) => document.getElementById(id);
const who = decodeURIComponent(location.pathname.split('/')[2] ?? '');
const page = Math.max(1, Number.parseInt(new URLSearchParams(location.search).get('page') ?? '1', 10) || 1);
const PER_PAGE = 20;
const presetName = (p) => p.replace(/_/g, ' ');
const START = { rating: 1500, deviation: 350 };

function text(tag, content, className) {
  const e = document.createElement(tag);
  e.textContent = content;
  if (className) e.className = className;
  return e;
}

function when(ms) {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** Per rated game (by id), the rating change it brought, from the histories. */
const changes = new Map();

function ratingSection(preset, rated, history, since) {
  const section = document.createElement('section');
  section.className = 'rating';
  section.dataset.preset = preset;
  const head = document.createElement('h3');
  const board = document.createElement('a');
  board.href = `/leaderboard/${encodeURIComponent(preset)}`;
  board.textContent = presetName(preset);
  head.append(board);
  const figure = text('p', `${rated.rating} ± ${rated.deviation} · ${rated.games} rated ${rated.games === 1 ? 'game' : 'games'}`, 'figure');
  if (rated.provisional) figure.append(' ', text('span', 'provisional', 'badge provisional'));
  // The history keeps the latest games; when it holds them all, the start is known too,
  // drawn when the player was made (or just before its first rated game).
  const whole = history.length === rated.games;
  const startMs = Math.min(since || Infinity, history[0]?.at_ms ?? Infinity);
  const points = (whole && history.length ? [{ ...START, at_ms: startMs, label: 'start: 1500 ± 350' }] : []).concat(
    history.map((p) => ({ at_ms: p.at_ms, rating: p.rating, deviation: p.deviation, label: `${p.rating} ± ${p.deviation}, ${when(p.at_ms)}` })),
  );
  history.forEach((p, i) => {
    const before = i > 0 ? history[i - 1].rating : whole ? START.rating : null;
    if (before !== null) changes.set(p.game_id, p.rating - before);
  });
  section.append(head, figure, drawChart(points, `${presetName(preset)} rating over its latest ${history.length} rated games`));
  return section;
}

function gameItem(g) {
  const li = document.createElement('li');
  li.dataset.game = g.game_id;
  const a = document.createElement('a');
  a.href = `/watch/${encodeURIComponent(g.game_id)}${g.status === 'finished' ? '#replay' : ''}`;
  a.className = 'preset';
  a.textContent = presetName(g.preset);
  const against = text('span', 'against ', 'opponents');
  g.names.forEach((name, seat) => {
    if (seat === g.seat) return;
    if (against.childNodes.length > 1) against.append(', ');
    against.append(nameNode(name, g.player_ids?.[seat]));
  });
  const { how, text: result } = ownResult(g);
  li.append(a, against, text('span', result, `result ${how.replace(' ', '-')}`));
  if (g.rated) {
    const change = changes.get(g.game_id);
    const shown = change === undefined ? 'rated' : `${change >= 0 ? '+' : '−'}${Math.abs(change)}`;
    li.append(text('span', shown, 'change'));
  }
  li.append(text('span', when(g.created_ms), 'when'));
  return li;
}

function matchItem(m, me) {
  const li = document.createElement('li');
  li.dataset.match = m.id;
  const mine = m.players[0]?.id === me;
  const other = m.players.find((p) => p.id !== me) ?? m.players[1];
  const against = text('span', 'against ', 'opponents');
  if (other) against.append(nameNode(other.bot ? `${other.name} bot` : other.name, other.bot ? null : other.id));
  const s = m.score;
  // The score is the challenger's: read from the other side, wins and losses swap.
  const [won, lost, pf, pa] = mine ? [s.wins, s.losses, s.points_for, s.points_against] : [s.losses, s.wins, s.points_against, s.points_for];
  const margin = m.margin.deals_done ? ` · ${mine ? '' : 'their '}margin ${m.margin.per_deal_mean >= 0 ? '+' : '−'}${Math.abs(m.margin.per_deal_mean).toFixed(1)} a deal` : '';
  li.append(
    text('span', `${presetName(m.preset)} match`, 'preset'),
    against,
    text('span', `${m.status} · ${m.margin.deals_done} of ${m.deals} deals · won ${won}, lost ${lost}, drawn ${s.draws} · points ${pf} – ${pa}${margin}`, 'when'),
  );
  const first = m.games[0];
  if (first) {
    const a = document.createElement('a');
    a.href = `/watch/${encodeURIComponent(first.game_id)}${first.status === 'finished' ? '#replay' : ''}`;
    a.textContent = 'its first game';
    li.append(a);
  }
  return li;
}

/** A league the player is in, linking to its page. */
function leagueLink(l) {
  const li = document.createElement('li');
  li.dataset.league = l.id;
  const a = document.createElement('a');
  a.href = `/leagues/${encodeURIComponent(l.id)}`;
  a.className = 'league-name';
  a.textContent = l.name;
  li.append(a);
  return li;
}

function pageLink(id, n) {
  const a = $(id);
  a.href = `/players/${encodeURIComponent(who)}${n > 1 ? `?page=${n}` : ''}`;
  a.hidden = false;
}

async function showGames(profile) {
  if ((profile.games ?? null) === null) {
    $('no-games').textContent = 'Not listed for a built-in level: its matches and tournaments are, when it has any.';
    $('no-games').hidden = false;
    return;
  }
  try {
    const list = await readPlayerGames(profile.id, page, PER_PAGE);
    $('recent').replaceChildren(...list.games.map(gameItem));
    $('no-games').hidden = list.games.length > 0;
    if (!list.games.length && page > 1) $('no-games').textContent = 'No games this far back.';
    const first = (page - 1) * PER_PAGE + 1;
    $('games-where').textContent = list.games.length ? `games ${first} to ${first + list.games.length - 1} of ${profile.games}, newest first` : '';
    if (page > 1) pageLink('newer', page - 1);
    if (list.games.length === PER_PAGE && first + PER_PAGE <= profile.games) pageLink('older', page + 1);
  } catch (err) {
    $('no-games').textContent = `Could not list the games: ${err.message}`;
    $('no-games').hidden = false;
  }
}

async function showMatches(profile) {
  try {
    const list = await readPlayerMatches(profile.id);
    $('matches').replaceChildren(...list.matches.map((m) => matchItem(m, profile.id)));
    $('matches-section').hidden = list.matches.length === 0;
  } catch {
    // The rest of the page stands without them.
  }
}

async function showTournaments(profile) {
  try {
    const list = await readPlayerTournaments(profile.id);
    $('tournaments').replaceChildren(...list.tournaments.map(tournamentItem));
    $('tournaments-section').hidden = list.tournaments.length === 0;
  } catch {
    // The rest of the page stands without them.
  }
}

async function show() {
  let profile;
  try {
    profile = await readProfile(who);
  } catch (err) {
    $('title').textContent = 'No such player';
    $('trouble').textContent = err.status === 404 ? `There is no player named "${who}".` : `Could not read the player: ${err.message}`;
    $('trouble').hidden = false;
    $('page').dataset.ready = 'true';
    return;
  }
  document.title = `Dominoes: ${profile.name}`;
  $('title').textContent = profile.name;
  if (profile.bot) {
    $('kind').textContent = 'bot';
    $('kind').hidden = false;
  }
  // A built-in level's games are not counted (it sits at any table that asks for it).
  const counted = profile.games ?? null;
  $('summary').textContent = counted === null
    ? 'A built-in level: it plays at any table that asks for it, and its games are not counted'
    : `${counted} ${counted === 1 ? 'game' : 'games'}${profile.created_ms ? ` · playing since ${when(profile.created_ms)}` : ''}`;
  if (profile.webhook) $('webhook').replaceChildren(webhookLine(profile.webhook));
  $('webhook').hidden = !profile.webhook;
  $('leagues').replaceChildren(...(profile.leagues ?? []).map(leagueLink));
  $('leagues-section').hidden = !profile.leagues?.length;
  const presets = Object.keys(profile.ratings);
  const histories = await Promise.all(presets.map((p) => readRatingHistory(profile.id, p).catch(() => [])));
  $('ratings').replaceChildren(...presets.map((p, i) => ratingSection(p, profile.ratings[p], histories[i], profile.created_ms)));
  $('no-ratings').hidden = presets.length > 0;
  await Promise.all([showGames(profile), showMatches(profile), showTournaments(profile)]);
  $('page').dataset.ready = 'true';
}

/** "Called by the server (webhook): active · 26 calls, 0 failed · answers in 43 ms (p50), 46 ms (p99)". */
function webhookLine(hook) {
  const parts = [`Called by the server (webhook): ${hook.status}`,
    `${hook.calls} ${hook.calls === 1 ? 'call' : 'calls'}, ${hook.failures} failed`];
  if (hook.latency_ms) parts.push(`answers in ${hook.latency_ms.p50} ms (p50), ${hook.latency_ms.p99} ms (p99)`);
  return document.createTextNode(parts.join(' · '));
}

show();
