// The lobby page: open games (waiting for players), newest first, each with a link to its
// table, read again every few seconds and whenever the lobby's stream says one opened.

import { listOpenGames } from './api.mjs';

const $ = (id) => document.getElementById(id);

function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

async function show() {
  try {
    const list = await listOpenGames();
    const items = list.games.map((g) => {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = `/watch/${encodeURIComponent(g.game_id)}`;
      a.className = 'preset';
      a.textContent = g.preset.replace('_', ' ');
      const seats = document.createElement('span');
      seats.className = 'seats-free';
      seats.textContent = `${g.seats} seats, ${g.free_seats.length} free`;
      const when = document.createElement('span');
      when.className = 'when';
      when.textContent = `opened ${ago(g.created_ms)}${g.prearranged ? ' · prearranged deal' : ''}`;
      li.append(a, seats, when);
      return li;
    });
    $('games').replaceChildren(...items);
    $('summary').textContent = items.length ? `${items.length} open ${items.length === 1 ? 'game' : 'games'}` : 'No open games right now.';
  } catch (err) {
    $('summary').textContent = `Could not list the games: ${err.message}`;
  }
}

// The API lists open games only; games that start while the page is open are known from
// the lobby's stream ("filled"), and shown until they finish.
const live = new Map();
function showLive() {
  const items = [...live.entries()].reverse().map(([id, finished]) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = `/watch/${encodeURIComponent(id)}`;
    a.textContent = `game ${id.slice(0, 8)}`;
    const what = document.createElement('span');
    what.className = 'when';
    what.textContent = finished ? 'finished: replay it' : 'playing';
    if (finished) a.href += '#replay';
    li.append(a, what);
    return li;
  });
  $('live').replaceChildren(...items);
  $('live-section').hidden = items.length === 0;
}
const news = new EventSource('/v1/lobby/events');
news.addEventListener('opened', show);
news.addEventListener('filled', (e) => {
  live.set(JSON.parse(e.data).game_id, false);
  showLive();
  show();
});
news.addEventListener('finished', (e) => {
  const id = JSON.parse(e.data).game_id;
  if (live.has(id)) {
    live.set(id, true);
    showLive();
  }
});

$('go').addEventListener('submit', (e) => {
  e.preventDefault();
  const id = $('game-id').value.trim();
  if (id) location.href = `/watch/${encodeURIComponent(id)}`;
});
show();
setInterval(show, 5000);
