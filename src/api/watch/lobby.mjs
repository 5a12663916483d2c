// The lobby page: open games (waiting for players) and games in play, newest first, each
// with a link to its table, read again every few seconds and whenever the lobby's stream
// says one opened, filled or finished.

import { listOpenGames, listPlayingGames } from './api.mjs';
import { gameItem as item } from './lists.mjs';

const $ = (id) => document.getElementById(id);

async function showOpen() {
  try {
    const list = await listOpenGames();
    const items = list.games.map((g) => item(g, `${g.seats} seats, ${g.free_seats.length} free`));
    $('games').replaceChildren(...items);
    $('summary').textContent = items.length ? `${items.length} open ${items.length === 1 ? 'game' : 'games'}` : 'No open games right now.';
  } catch (err) {
    $('summary').textContent = `Could not list the games: ${err.message}`;
  }
}

async function showPlaying() {
  try {
    const list = await listPlayingGames();
    const items = list.games.map((g) => item(g, `${g.seats} seats`));
    $('live').replaceChildren(...items);
    $('live-summary').textContent = items.length ? `${items.length} ${items.length === 1 ? 'game' : 'games'} in play` : 'No game in play right now.';
  } catch (err) {
    $('live-summary').textContent = `Could not list the games in play: ${err.message}`;
  }
}

// Games that finish while the page is open, known from the lobby's stream: their replay.
const finished = [];
function showFinished() {
  const items = finished.map((id) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = `/watch/${encodeURIComponent(id)}#replay`;
    a.textContent = `game ${id.slice(0, 8)}`;
    const what = document.createElement('span');
    what.className = 'when';
    what.textContent = 'finished: replay it';
    li.append(a, what);
    return li;
  });
  $('finished').replaceChildren(...items);
  $('finished-section').hidden = items.length === 0;
}

function show() {
  showOpen();
  showPlaying();
}

const news = new EventSource('/v1/lobby/events');
news.addEventListener('opened', showOpen);
news.addEventListener('filled', show);
news.addEventListener('finished', (e) => {
  finished.unshift(JSON.parse(e.data).game_id);
  finished.splice(20);
  showFinished();
  showPlaying();
});
news.addEventListener('resync', show);

$('go').addEventListener('submit', (e) => {
  e.preventDefault();
  const id = $('game-id').value.trim();
  if (id) location.href = `/watch/${encodeURIComponent(id)}`;
});
show();
setInterval(show, 5000);
