// A league's page: its table (rank, entrant, rating ± deviation, the margin a deal with its
// 95% interval, matches, wins-draws-losses, whether it can be paired now, or has left),
// its matches in play and the latest counted, each with a link to every one of its games,
// and each entrant's league rating over its matches. Read again on every event of the
// league's stream (a match started or counted), and every 15 s besides for what the stream
// does not tell (an entrant in or out, available or away); every 5 s while the stream is
// not open (a server without it, or a connection lost).

import { followLeague, readLeague, readMatch } from './api.mjs';
import { drawChart } from './chart.mjs';
import { ago } from './lists.mjs';

const $ = (id) => document.getElementById(id);
const id = decodeURIComponent(location.pathname.split('/')[2] ?? '');
const POLL_MS = 5000;
const STREAMING_POLL_MS = 15000;
const presetName = (p) => p.replace(/_/g, ' ');
/** A player's id: 32 hex digits. Any other entrant is a built-in level, by its name. */
const PLAYER_ID = /^[0-9a-f]{32}$/;

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

function when(ms) {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A margin a deal, signed, to one decimal: "+3.5", "−1.0", "0.0". */
function margin(x) {
  const shown = Math.abs(x).toFixed(1);
  if (shown === '0.0') return '0.0';
  return `${x < 0 ? '−' : '+'}${shown}`;
}

/** An entrant's name linking to its page (a player's by its name, a level's by its level), with its badges. */
function who(e) {
  const span = document.createElement('span');
  span.className = 'who';
  if (!e) return span;
  const a = document.createElement('a');
  a.href = `/players/${encodeURIComponent(PLAYER_ID.test(e.id) ? e.name : e.id)}`;
  a.className = 'player';
  a.textContent = e.name;
  span.append(a);
  if (e.bot) span.append(' ', text('span', 'bot', 'badge'));
  return span;
}

function marginCell(e) {
  const td = cell(e.matches ? margin(e.margin_per_deal) : '–', 'number margin');
  if (e.margin_ci95) {
    const [lo, hi] = e.margin_ci95;
    const ci = text('span', `${margin(lo)} to ${margin(hi)}`, 'ci');
    ci.title = '95% interval';
    td.append(ci);
  }
  return td;
}

function nowCell(e) {
  const [label, cls] = e.left ? ['left', 'badge gone'] : e.available ? ['available', 'badge available'] : ['away', 'badge away'];
  return cell(text('span', label, cls), 'now');
}

function row(e) {
  const tr = document.createElement('tr');
  tr.dataset.entrant = e.id;
  if (e.left) tr.className = 'left';
  tr.append(
    cell(String(e.rank)),
    cell(who(e)),
    cell(`${e.rating} ± ${e.deviation}`, 'number rated'),
    marginCell(e),
    cell(String(e.matches), 'number matches'),
    cell(`${e.wins}–${e.draws}–${e.losses}`, 'number wdl'),
    nowCell(e),
  );
  return tr;
}

/** What a counted match came to, in words. */
function outcome(r, byId) {
  if (r.result === 'void') return 'void (not played out)';
  const a = `${margin(r.margin ?? 0)} a deal`;
  if (r.result === 'draw') return `drawn, ${a}`;
  const winner = byId.get(r[r.result])?.name ?? 'someone';
  return `${winner} won, ${r.result === 'a' ? a : `${margin(-(r.margin ?? 0))} a deal`}`;
}

/** The matches read so far, by id: a finished one never changes. */
const matches = new Map();

function gameLinks(matchId) {
  const links = document.createElement('span');
  links.className = 'game-links';
  const m = matches.get(matchId);
  if (!m) return links;
  m.games.forEach((g, i) => {
    const a = document.createElement('a');
    // A finished game opens on its replay.
    a.href = `/watch/${encodeURIComponent(g.game_id)}${g.status === 'finished' ? '#replay' : ''}`;
    a.className = 'game';
    a.dataset.game = g.game_id;
    a.textContent = m.games.length > 1 ? `game ${i + 1}` : 'game';
    if (i > 0) links.append(' · ');
    links.append(a);
  });
  return links;
}

function matchItem(m, byId, result) {
  const li = document.createElement('li');
  li.className = 'pairing';
  li.dataset.match = m.match_id;
  const players = document.createElement('span');
  players.className = 'players';
  players.append(who(byId.get(m.a)), text('span', ' – ', 'versus'), who(byId.get(m.b)));
  const said = result
    ? text('span', outcome(m, byId), `result over ${m.result}`)
    : text('span', `in play, started ${ago(m.started_ms)}`, 'result playing');
  if (result) said.title = `ended ${when(m.ended_ms)}`;
  li.append(players, said, gameLinks(m.match_id));
  return li;
}

function chartOf(e) {
  const section = document.createElement('section');
  section.className = 'rating';
  section.dataset.entrant = e.id;
  const head = document.createElement('h3');
  head.append(who(e));
  const figure = text('p', `${e.rating} ± ${e.deviation} · ${e.matches} ${e.matches === 1 ? 'match' : 'matches'}`, 'figure');
  const points = e.history.map((p) => ({ ...p, label: `${p.rating} ± ${p.deviation}, ${when(p.at_ms)}` }));
  section.append(head, figure, drawChart(points, `${e.name}'s league rating over its latest ${points.length} ${points.length === 1 ? 'match' : 'matches'}`));
  return section;
}

function summary(l) {
  const parts = [
    presetName(l.preset),
    `${l.deals_per_match} ${l.deals_per_match === 1 ? 'deal' : 'deals'} a match, each played twice with the seats swapped`,
    `up to ${l.max_concurrent} ${l.max_concurrent === 1 ? 'match' : 'matches'} at once an entrant`,
  ];
  if (l.clock) parts.push(`${Math.round(l.clock.bank_secs / 60)} min + ${l.clock.increment_secs} s a move`);
  parts.push(`${l.matches_counted} ${l.matches_counted === 1 ? 'match' : 'matches'} counted`, `since ${when(l.created_ms)}`);
  return parts.join(' · ');
}

function draw(l) {
  const byId = new Map(l.entrants.map((e) => [e.id, e]));
  document.title = `Dominoes: ${l.name}`;
  $('title').textContent = l.name;
  $('summary').textContent = summary(l);
  $('rows').replaceChildren(...l.entrants.map(row));
  $('table').hidden = l.entrants.length === 0;
  $('no-entrants').hidden = l.entrants.length > 0;
  $('running').replaceChildren(...l.running.map((m) => matchItem(m, byId, false)));
  $('no-running').hidden = l.running.length > 0;
  $('recent').replaceChildren(...l.recent.map((m) => matchItem(m, byId, true)));
  $('no-recent').hidden = l.recent.length > 0;
  const charted = l.entrants.filter((e) => e.history.length > 0);
  $('charts').replaceChildren(...charted.map(chartOf));
  $('charts-section').hidden = charted.length === 0;
  Object.assign($('page').dataset, { ready: 'true', counted: l.matches_counted, running: l.running.length });
}

/** Reads the games of the matches shown that are not known yet, or still in play. */
async function readMatches(l) {
  const wanted = [
    ...l.running.map((m) => m.match_id),
    ...l.recent.filter((r) => matches.get(r.match_id)?.status !== 'finished').map((r) => r.match_id),
  ];
  let changed = false;
  // A few at a time: the latest 50 matches, the first time, are as many requests.
  for (let i = 0; i < wanted.length; i += 6) {
    const read = await Promise.all(wanted.slice(i, i + 6).map((m) => readMatch(m).catch(() => null)));
    for (const m of read) {
      if (m) {
        matches.set(m.id, m);
        changed = true;
      }
    }
  }
  return changed;
}

let latest = null;
let lastRead = 0;
/** The stream: true open, false retrying, null not served (or given up), undefined not yet known. */
let stream;
const CONNECTION = { true: 'live', false: 'reconnecting…', null: 'updated every 5 s', undefined: '' };
let reading = null;
let again = false;

/** Reads the league (and its matches' games) and draws it; one read at a time, the last asked for always done. */
async function refresh() {
  if (reading) {
    again = true;
    return reading;
  }
  reading = (async () => {
    do {
      again = false;
      lastRead = Date.now();
      try {
        latest = await readLeague(id);
      } catch (err) {
        if (!latest) throw err;
        $('connection').textContent = `could not read the league: ${err.message}`;
        continue;
      }
      $('connection').textContent = CONNECTION[stream];
      draw(latest);
      if (await readMatches(latest)) draw(latest);
      $('page').dataset.links = String(document.querySelectorAll('#running a.game, #recent a.game').length);
    } while (again);
  })();
  try {
    await reading;
  } finally {
    reading = null;
  }
}

async function show() {
  try {
    await refresh();
  } catch (err) {
    $('title').textContent = 'No such league';
    $('trouble').textContent = err.status === 404 ? 'There is no league with this id.' : `Could not read the league: ${err.message}`;
    $('trouble').hidden = false;
    $('page').dataset.ready = 'true';
    return;
  }
  // Any event of the stream means the league changed: read it again. While the stream is
  // not open, read it every few seconds instead.
  followLeague(id, () => refresh(), (up) => {
    stream = up;
    $('connection').textContent = CONNECTION[stream];
    $('page').dataset.stream = up === true ? 'open' : up === false ? 'retrying' : 'none';
  });
  setInterval(() => {
    if (Date.now() - lastRead >= (stream === true ? STREAMING_POLL_MS : POLL_MS) - 100) refresh();
  }, 1000);
}

show();
