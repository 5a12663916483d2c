// The home page, `/`: games in play, the latest finished games (each opening its
// replay), tournaments registering, running and just finished, the latest leagues, and a
// link to every preset's leaderboard. Read again every few seconds and when the lobby's stream says a
// game started or finished.

import { listFinishedGames, listLeagues, listPlayingGames, listPresets, listTournaments } from './api.mjs';
import { gameItem, leagueItem, tournamentItem } from './lists.mjs';

const $ = (id) => document.getElementById(id);
const SHOWN = 8;
const counted = (n, one, many) => `${n} ${n === 1 ? one : many}`;

async function showLive() {
  try {
    const list = await listPlayingGames(1, SHOWN);
    $('live').replaceChildren(...list.games.map((g) => gameItem(g, counted(g.seats, 'seat', 'seats'))));
    $('live-summary').textContent = list.games.length ? '' : 'No game in play right now.';
  } catch (err) {
    $('live-summary').textContent = `Could not list the games in play: ${err.message}`;
  }
}

async function showFinished() {
  try {
    const list = await listFinishedGames(1, SHOWN);
    $('finished').replaceChildren(...list.games.map((g) => gameItem(g, 'finished: replay it', { replay: true })));
    $('finished-summary').textContent = list.games.length ? '' : 'No game has finished lately.';
  } catch (err) {
    $('finished-summary').textContent = `Could not list the finished games: ${err.message}`;
  }
}

async function showTournaments() {
  try {
    const lists = await Promise.all(['running', 'registering', 'finished'].map((s) => listTournaments(s, 1, 5)));
    const all = lists.flatMap((l) => l.tournaments);
    $('tournaments').replaceChildren(...all.map((t) => {
      const li = tournamentItem(t);
      li.prepend(Object.assign(document.createElement('span'), { className: 'status', textContent: t.status }));
      li.firstChild.dataset.status = t.status;
      return li;
    }));
    $('tournaments-summary').textContent = all.length ? '' : 'No tournament yet.';
  } catch (err) {
    $('tournaments-summary').textContent = `Could not list the tournaments: ${err.message}`;
  }
}

async function showLeagues() {
  try {
    const list = await listLeagues(1, SHOWN);
    $('leagues').replaceChildren(...list.leagues.map(leagueItem));
    $('leagues-summary').textContent = list.leagues.length ? '' : 'No league yet.';
  } catch (err) {
    $('leagues-summary').textContent = `Could not list the leagues: ${err.message}`;
  }
}

async function showBoards() {
  try {
    const presets = await listPresets();
    $('boards').replaceChildren(...presets.map((p) => {
      const a = document.createElement('a');
      a.href = `/leaderboard/${encodeURIComponent(p.name)}`;
      a.textContent = p.name.replace(/_/g, ' ');
      return a;
    }));
  } catch {
    $('boards').replaceChildren(Object.assign(document.createElement('a'), { href: '/leaderboard', textContent: 'every leaderboard' }));
  }
}

async function show() {
  await Promise.all([showLive(), showFinished(), showTournaments(), showLeagues()]);
  $('page').dataset.ready = 'true';
}

const news = new EventSource('/v1/lobby/events');
news.addEventListener('filled', showLive);
news.addEventListener('finished', () => Promise.all([showLive(), showFinished()]));
news.addEventListener('resync', show);
showBoards();
show();
setInterval(show, 10000);
