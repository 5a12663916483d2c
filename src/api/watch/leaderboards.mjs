// Every preset's leaderboard, `/leaderboard`: each preset's top players, linking to its
// whole board.

import { listPresets, readLeaderboard } from './api.mjs';

const $ = (id) => document.getElementById(id);
const TOP = 5;
const presetName = (p) => p.replace(/_/g, ' ');

function board(preset, players) {
  const section = document.createElement('section');
  section.className = 'rating';
  section.dataset.preset = preset;
  const head = document.createElement('h2');
  const a = document.createElement('a');
  a.href = `/leaderboard/${encodeURIComponent(preset)}`;
  a.textContent = presetName(preset);
  head.append(a);
  section.append(head);
  if (!players.length) {
    section.append(Object.assign(document.createElement('p'), { className: 'summary', textContent: 'No rated game yet.' }));
    return section;
  }
  const ol = document.createElement('ol');
  ol.className = 'top';
  for (const p of players) {
    const li = document.createElement('li');
    li.dataset.player = p.name;
    const name = document.createElement('a');
    name.href = `/players/${encodeURIComponent(p.name)}`;
    name.textContent = p.name;
    li.append(name, ` ${p.rating}`);
    if (p.bot) li.append(' ', Object.assign(document.createElement('span'), { className: 'badge', textContent: 'bot' }));
    if (p.provisional) li.append(' ', Object.assign(document.createElement('span'), { className: 'badge provisional', textContent: 'provisional' }));
    ol.append(li);
  }
  section.append(ol);
  return section;
}

async function show() {
  try {
    const presets = await listPresets();
    const boards = await Promise.all(presets.map((p) => readLeaderboard(p.name, 1, TOP).then((b) => b.players, () => [])));
    $('boards').replaceChildren(...presets.map((p, i) => board(p.name, boards[i])));
    $('summary').textContent = `The top ${TOP} of each preset; provisional ratings (too few games to tell) come after every established one.`;
  } catch (err) {
    $('summary').textContent = `Could not read the leaderboards: ${err.message}`;
  }
  $('page').dataset.ready = 'true';
}

show();
