// A tournament's page: its standings (rank, player, score, Buchholz, Sonneborn-Berger,
// margin, withdrawn players marked), the round in play with a link to each game's table
// and its byes, the rounds before it, and a crosstable for a round robin; redrawn from
// each event of the tournament's stream, which carries the whole tournament (and, before
// the start, read again every few seconds: joining is not on the stream).

import { readTournament, followTournament } from './api.mjs';

const $ = (id) => document.getElementById(id);
const id = decodeURIComponent(location.pathname.split('/')[2] ?? '');
const words = (name) => name.replace(/_/g, ' ');
const FORMATS = { swiss: 'Swiss', round_robin: 'Round robin' };
const REGISTRATION_POLL_MS = 3000;

function text(tag, content, className) {
  const e = document.createElement(tag);
  e.textContent = content;
  if (className) e.className = className;
  return e;
}

function cell(content, className) {
  const td = document.createElement('td');
  if (content instanceof Node) td.append(content);
  else td.textContent = content;
  if (className) td.className = className;
  return td;
}

/** A score, Buchholz or Sonneborn-Berger figure: exact quarters, written as fractions. */
function points(x) {
  const quarters = Math.round(x * 4);
  const whole = Math.trunc(quarters / 4);
  const part = ['', '¼', '½', '¾'][Math.abs(quarters % 4)];
  return whole === 0 && part ? `${quarters < 0 ? '−' : ''}${part}` : `${whole < 0 ? '−' : ''}${Math.abs(whole)}${part}`;
}

const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : '0');

function when(ms) {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * Whose page a player's name opens: its own, by name; a built-in level entered again
 * (`greedy 2`, id `greedy-2`: a player's id has no dash) is the level itself.
 */
function profileOf(p) {
  return p.id.includes('-') ? p.id.slice(0, p.id.lastIndexOf('-')) : p.name;
}

/** A player's name linking to its page, with its badges. */
function who(p) {
  const span = document.createElement('span');
  span.className = 'who';
  if (!p) return span;
  const a = document.createElement('a');
  a.href = `/players/${encodeURIComponent(profileOf(p))}`;
  a.className = 'player';
  a.textContent = p.name;
  span.append(a);
  if (p.bot) span.append(' ', text('span', 'bot', 'badge'));
  if (p.withdrawn) span.append(' ', text('span', 'withdrawn', 'badge gone'));
  return span;
}

function standingsRow(p) {
  const tr = document.createElement('tr');
  tr.dataset.player = p.id;
  if (p.withdrawn) tr.className = 'withdrawn';
  tr.append(
    cell(String(p.rank)),
    cell(who(p)),
    cell(points(p.score), 'number score'),
    cell(points(p.buchholz), 'number'),
    cell(points(p.sonneborn_berger), 'number'),
    cell(signed(p.margin), 'number'),
  );
  return tr;
}

function outcome(pairing, byId) {
  if (pairing.result === null) return pairing.games.length ? 'in play' : 'to be played';
  if (pairing.result === 'draw') return 'drawn';
  return `${byId.get(pairing[pairing.result])?.name ?? 'someone'} won`;
}

function pairingItem(pairing, byId) {
  const li = document.createElement('li');
  li.className = 'pairing';
  Object.assign(li.dataset, { round: pairing.round, a: pairing.a, b: pairing.b, result: pairing.result ?? '' });
  const players = document.createElement('span');
  players.className = 'players';
  players.append(who(byId.get(pairing.a)), text('span', ' – ', 'versus'), who(byId.get(pairing.b)));
  const result = text('span', outcome(pairing, byId), `result ${pairing.result === null ? 'playing' : 'over'}`);
  const links = document.createElement('span');
  links.className = 'game-links';
  pairing.games.forEach((game, i) => {
    const a = document.createElement('a');
    // A finished game opens on its replay.
    a.href = `/watch/${encodeURIComponent(game)}${pairing.result === null ? '' : '#replay'}`;
    a.className = 'game';
    a.dataset.game = game;
    a.textContent = pairing.games.length > 1 ? `game ${i + 1}` : 'game';
    if (i > 0) links.append(' · ');
    links.append(a);
  });
  li.append(players, result, links);
  return li;
}

function byeItem(bye, byId) {
  const li = document.createElement('li');
  li.className = 'bye';
  li.dataset.round = bye.round;
  li.dataset.player = bye.player;
  li.append(who(byId.get(bye.player)), text('span', 'has the bye (a win)', 'when'));
  return li;
}

function roundList(t, round, byId) {
  const ul = document.createElement('ul');
  ul.className = 'games pairings';
  ul.append(
    ...t.pairings.filter((p) => p.round === round).map((p) => pairingItem(p, byId)),
    ...t.byes.filter((b) => b.round === round).map((b) => byeItem(b, byId)),
  );
  return ul;
}

/** The round robin's table: row player's result against each column player. */
function crosstable(t) {
  const players = t.players;
  const table = $('crosstable');
  const head = document.createElement('tr');
  head.append(text('th', '#'), text('th', 'Player'), ...players.map((p) => {
    const th = text('th', String(p.rank), 'number');
    th.scope = 'col';
    th.title = p.name;
    return th;
  }), text('th', 'Score', 'number'));
  const thead = document.createElement('thead');
  thead.append(head);
  const between = new Map();
  for (const p of t.pairings) {
    between.set(`${p.a} ${p.b}`, { pairing: p, mine: 'a' });
    between.set(`${p.b} ${p.a}`, { pairing: p, mine: 'b' });
  }
  const tbody = document.createElement('tbody');
  for (const row of players) {
    const tr = document.createElement('tr');
    tr.dataset.player = row.id;
    if (row.withdrawn) tr.className = 'withdrawn';
    tr.append(cell(String(row.rank)), cell(who(row)));
    for (const col of players) {
      if (col.id === row.id) {
        tr.append(cell('×', 'number self'));
        continue;
      }
      const met = between.get(`${row.id} ${col.id}`);
      let shown = '';
      if (met) {
        const r = met.pairing.result;
        shown = r === null ? '…' : r === 'draw' ? '½' : r === met.mine ? '1' : '0';
      }
      let content = shown;
      if (met && met.pairing.games.length) {
        const a = document.createElement('a');
        a.href = `/watch/${encodeURIComponent(met.pairing.games[0])}${met.pairing.result === null ? '' : '#replay'}`;
        a.textContent = shown;
        a.title = `${row.name} against ${col.name}, round ${met.pairing.round}`;
        content = a;
      }
      const td = cell(content, 'number result');
      td.dataset.against = col.id;
      td.dataset.result = shown;
      tr.append(td);
    }
    tr.append(cell(points(row.score), 'number score'));
    tbody.append(tr);
  }
  table.replaceChildren(thead, tbody);
}

function summary(t) {
  const parts = [
    FORMATS[t.format] ?? t.format,
    words(t.preset),
    t.duplicate ? 'duplicate (each pairing one deal, played twice with the seats swapped)' : 'one game a pairing',
  ];
  if (t.status === 'registering') {
    parts.push(`${t.players.length} of at most ${t.max_players} players`, `starts ${when(t.starts_at_ms)}`);
  } else if (t.rounds) {
    parts.push(`round ${t.round} of ${t.rounds}`);
  }
  if (t.rated) parts.push('rated');
  return parts.join(' · ');
}

function draw(t) {
  const byId = new Map(t.players.map((p) => [p.id, p]));
  document.title = `Dominoes: ${t.name}`;
  $('title').textContent = t.name;
  $('status').textContent = t.status;
  $('status').dataset.status = t.status;
  $('status').hidden = false;
  $('summary').textContent = summary(t);
  // A finished tournament says who won first: the top of the standings (never shared:
  // the tiebreaks end with the earlier entry).
  const first = t.status === 'finished' ? t.players.find((p) => p.rank === 1) : null;
  $('winner').textContent = first ? `Winner: ${first.name}, with ${points(first.score)} ${first.score === 1 ? 'point' : 'points'}` : '';
  $('winner').hidden = !first;
  // A round waiting for games the server could not make yet says why.
  const reason = t.reason ?? (t.waiting ? `This round waits: ${t.waiting.reason}` : '');
  $('reason').textContent = reason;
  $('reason').hidden = !reason;

  $('standings-rows').replaceChildren(...t.players.map(standingsRow));
  $('standings').hidden = t.players.length === 0;
  $('no-players').hidden = t.players.length > 0;

  // While it runs, the round in play has a section of its own; the rest are past.
  const running = t.status === 'running' && t.round > 0;
  $('current-title').textContent = `Round ${t.round}`;
  if (running) $('current').replaceChildren(...roundList(t, t.round, byId).children);
  $('current-section').hidden = !running;
  const lastPast = running ? t.round - 1 : t.round;
  const past = [];
  for (let round = lastPast; round >= 1; round--) {
    const details = document.createElement('details');
    details.className = 'round-result';
    details.dataset.round = round;
    details.open = round === lastPast;
    details.append(text('summary', `Round ${round}`), roundList(t, round, byId));
    past.push(details);
  }
  $('past').replaceChildren(...past);
  $('past-section').hidden = past.length === 0;

  const table = t.format === 'round_robin' && t.players.length > 0 && t.status !== 'registering';
  if (table) crosstable(t);
  $('crosstable-section').hidden = !table;

  Object.assign($('page').dataset, { ready: 'true', status: t.status, round: t.round });
}

async function show() {
  let t;
  try {
    t = await readTournament(id);
  } catch (err) {
    $('title').textContent = 'No such tournament';
    $('trouble').textContent = err.status === 404 ? 'There is no tournament with this id.' : `Could not read the tournament: ${err.message}`;
    $('trouble').hidden = false;
    $('page').dataset.ready = 'true';
    return;
  }
  draw(t);
  if (t.status === 'finished' || t.status === 'canceled') return;
  let latest = t;
  const redraw = (now) => {
    latest = now;
    draw(now);
  };
  followTournament(id, redraw, (up) => {
    $('connection').textContent = up === false ? 'reconnecting…' : '';
  });
  // Players joining or withdrawing before the start are not on the stream: read them
  // meanwhile. The start is on the stream, which has the last word from then on.
  const poll = setInterval(async () => {
    if (latest.status !== 'registering') return clearInterval(poll);
    const now = await readTournament(id).catch(() => null);
    if (now?.status === 'registering' && latest.status === 'registering') redraw(now);
  }, REGISTRATION_POLL_MS);
}

show();
