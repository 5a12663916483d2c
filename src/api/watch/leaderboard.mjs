// A preset's leaderboard, a page at a time (`?page=N` in the address): rank, player
// (linking to its page), rating and deviation, rated games; provisional ratings marked.

import { readLeaderboard, listPresets } from './api.mjs';

const $ = (id) => document.getElementById(id);
const preset = decodeURIComponent(location.pathname.split('/')[2] ?? '');
const page = Math.max(1, Number.parseInt(new URLSearchParams(location.search).get('page') ?? '1', 10) || 1);
const PER_PAGE = 50;
const presetName = (p) => p.replace(/_/g, ' ');

function cell(content, className) {
  const td = document.createElement('td');
  if (content instanceof Node) td.append(content);
  else td.textContent = content;
  if (className) td.className = className;
  return td;
}

function row(p) {
  const tr = document.createElement('tr');
  tr.dataset.player = p.name;
  if (p.provisional) tr.className = 'provisional';
  const name = document.createElement('a');
  name.href = `/players/${encodeURIComponent(p.name)}`;
  name.textContent = p.name;
  const who = document.createElement('span');
  who.append(name);
  if (p.bot) who.append(' ', Object.assign(document.createElement('span'), { className: 'badge', textContent: 'bot' }));
  if (p.provisional) who.append(' ', Object.assign(document.createElement('span'), { className: 'badge provisional', textContent: 'provisional' }));
  tr.append(cell(String(p.rank)), cell(who), cell(String(p.rating), 'number'), cell(String(p.deviation), 'number'), cell(String(p.games), 'number'));
  return tr;
}

function pageLink(id, n) {
  const a = $(id);
  a.href = `/leaderboard/${encodeURIComponent(preset)}${n > 1 ? `?page=${n}` : ''}`;
  a.hidden = false;
}

async function showPresets() {
  try {
    const presets = await listPresets();
    $('presets').replaceChildren(...presets.map((p) => {
      const a = document.createElement('a');
      a.href = `/leaderboard/${encodeURIComponent(p.name)}`;
      a.textContent = presetName(p.name);
      if (p.name === preset) a.setAttribute('aria-current', 'page');
      return a;
    }));
  } catch {
    // The board still shows without the other presets' links.
  }
}

async function show() {
  $('title').textContent = `${presetName(preset)} leaderboard`;
  document.title = `Dominoes: ${presetName(preset)} leaderboard`;
  try {
    const board = await readLeaderboard(preset, page, PER_PAGE);
    $('rows').replaceChildren(...board.players.map(row));
    $('board').hidden = board.players.length === 0;
    $('summary').textContent = board.players.length
      ? `Ranks ${board.players[0].rank} to ${board.players[board.players.length - 1].rank}`
      : page > 1 ? 'No one this far down.' : 'No rated game in this preset yet.';
    if (page > 1) pageLink('prev', page - 1);
    if (board.players.length === board.per_page) pageLink('next', page + 1);
    $('where').textContent = `page ${page}`;
  } catch (err) {
    $('summary').textContent = '';
    $('trouble').textContent = err.status === 404 ? `There is no preset named "${preset}".` : `Could not read the leaderboard: ${err.message}`;
    $('trouble').hidden = false;
  }
  $('page').dataset.ready = 'true';
}

showPresets();
show();
