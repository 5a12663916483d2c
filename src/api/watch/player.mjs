// A player's page: its ratings per preset, each with a chart of the rating over its
// latest rated games (deviation as a band), and its recent games with the opponents, the
// result and the rating change, each linking to its table or its replay.

import { readProfile, readRatingHistory, readPlayerGames } from './api.mjs';
import { drawChart } from './chart.mjs';

const $ = (id) => document.getElementById(id);
const who = decodeURIComponent(location.pathname.split('/')[2] ?? '');
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

function ratingSection(preset, rated, history) {
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
  // The history keeps the latest games; when it holds them all, the start is known too.
  const whole = history.length === rated.games;
  const points = (whole ? [{ ...START, label: 'start: 1500 ± 350' }] : []).concat(
    history.map((p) => ({ rating: p.rating, deviation: p.deviation, label: `${p.rating} ± ${p.deviation}, ${when(p.at_ms)}` })),
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
  const others = g.names.filter((_, seat) => seat !== g.seat).map((n) => n ?? 'a free seat');
  const against = text('span', `against ${others.join(', ')}`, 'opponents');
  const result = text('span', g.outcome ?? (g.status === 'finished' ? 'over' : 'in play'), `result ${g.outcome ?? g.status}`);
  li.append(a, against, result, text('span', g.scores.join(' – '), 'when'));
  if (g.rated) {
    const change = changes.get(g.game_id);
    const shown = change === undefined ? 'rated' : `${change >= 0 ? '+' : '−'}${Math.abs(change)}`;
    li.append(text('span', shown, 'change'));
  }
  li.append(text('span', when(g.created_ms), 'when'));
  return li;
}

async function show() {
  let profile;
  try {
    profile = await readProfile(who);
  } catch (err) {
    $('title').textContent = 'No such player';
    $('trouble').textContent = err.status === 404 ? `There is no player named "${who}".` : `Could not read the player: ${err.message}`;
    $('trouble').hidden = false;
    return;
  }
  document.title = `Dominoes: ${profile.name}`;
  $('title').textContent = profile.name;
  if (profile.bot) {
    $('kind').textContent = 'bot';
    $('kind').hidden = false;
  }
  $('summary').textContent = `${profile.games} ${profile.games === 1 ? 'game' : 'games'}${profile.created_ms ? ` · playing since ${when(profile.created_ms)}` : ''}`;
  const presets = Object.keys(profile.ratings);
  const histories = await Promise.all(presets.map((p) => readRatingHistory(profile.id, p).catch(() => [])));
  $('ratings').replaceChildren(...presets.map((p, i) => ratingSection(p, profile.ratings[p], histories[i])));
  $('no-ratings').hidden = presets.length > 0;
  try {
    const list = await readPlayerGames(profile.id);
    $('recent').replaceChildren(...list.games.map(gameItem));
    $('no-games').hidden = list.games.length > 0;
  } catch (err) {
    $('no-games').textContent = `Could not list the games: ${err.message}`;
    $('no-games').hidden = false;
  }
  $('page').dataset.ready = 'true';
}

show();
