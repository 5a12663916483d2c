// The game page: draws one game's table from its view, live from its event stream; with
// `#token=...` the seat's hand too, played by clicking; with `#replay`, a finished game
// step by step from its export.

import { followEvents, postMove, readExport, readLog, readView } from './api.mjs';
import { backTile, layoutSvg, tileLabel, tileSvg } from './draw.mjs';
import { fitTable, tipsOf } from './geometry.mjs';
import { sceneOfView, replaySteps } from './scene.mjs';
import { canonical, describeMatch, describeRound, halves, seatName, tableOf } from './table.mjs';

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== false && v != null) e.setAttribute(k, v === true ? '' : String(v));
  }
  e.append(...children.filter((c) => c != null));
  return e;
};

const gameId = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop());
const fragment = new URLSearchParams(location.hash.slice(1));
const token = fragment.get('token') || null;
const replaying = fragment.has('replay');

const state = {
  view: null,
  log: { start: [], entries: [] },
  receivedAt: 0,
  busy: false,
  choosing: null, // a tile whose end is being chosen
  confirmResign: false,
  message: '',
  // Rounds the reader opened or closed in the Results box, kept across redraws.
  openRounds: new Set(),
  closedRounds: new Set(),
  tokenRefused: null, // why the token was refused, once it was
};

// ----- drawing -----

/** The frame the layout is laid out in, in tile halves, from the felt's size. */
function frameFor(felt) {
  const width = Math.max(280, felt.clientWidth || 320);
  // A tile's half: 24 px or more (its pips then 5 px wide on a 1x screen), up to 32 px on
  // a wide screen. A layout too long for the frame still shrinks it (fitTable).
  const unit = Math.min(32, Math.max(24, width / 22));
  const hw = Math.max(6, Math.floor(width / unit / 2) - 1);
  const hh = Math.max(6, Math.round(hw * (width < 600 ? 1.3 : 0.6)));
  return { hw, hh };
}

function drawLayout(scene) {
  const felt = $('felt');
  felt.replaceChildren();
  if (!scene.layout?.lead) {
    const note = scene.status === 'waiting' ? 'Waiting for players to sit down' : 'The table is empty: waiting for the lead';
    felt.append(el('p', { class: 'felt-note', text: note }));
    return;
  }
  const table = tableOf(scene.layout, scene.spinner);
  const { hw, hh } = frameFor(felt);
  const fitted = fitTable(table, hw, hh);
  const ends = scene.layout.ends ?? [];
  felt.append(layoutSvg(fitted, { ends, tips: tipsOf(fitted.tiles) }));
}

function clockText(ms) {
  if (ms == null) return '';
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

function remainingMs(scene, seat) {
  const c = scene.clock;
  if (!c) return null;
  if (scene.turn === seat && c.deadline_ms != null && !replaying) {
    return c.deadline_ms - c.now_ms - (performance.now() - state.receivedAt);
  }
  return c.banks_ms?.[seat] ?? null;
}

/** Where each seat sits around the table: "you" (or seat 0) at the bottom. */
function placesOf(count, bottom) {
  const around = { 2: ['south', 'north'], 3: ['south', 'west', 'north'], 4: ['south', 'west', 'north', 'east'] }[count] ?? [];
  const places = [];
  for (let i = 0; i < count; i++) places[(bottom + i) % count] = around[i];
  return places;
}

function drawSeats(scene) {
  const places = placesOf(scene.seats.length, scene.you ?? 0);
  for (const place of ['north', 'west', 'east', 'south']) $(`seat-${place}`).replaceChildren();
  for (const s of scene.seats) {
    const card = el('article', {
      class: ['seat', scene.turn === s.seat ? 'to-move' : '', s.abandoned ? 'abandoned' : '', scene.you === s.seat ? 'you' : ''].join(' ').trim(),
      'data-seat': s.seat,
      'aria-label': `${s.name}${scene.turn === s.seat ? ', to move' : ''}`,
    });
    const badges = el('span', { class: 'badges' },
      s.bot ? el('span', { class: 'badge bot', text: 'bot' }) : null,
      // Only a seat taken with a player's key: an anonymous seat may show any free name.
      s.playerId ? el('span', { class: 'badge player', title: `player ${s.playerId}`, text: 'player' }) : null,
      s.team != null ? el('span', { class: 'badge team', text: `team ${s.team === 0 ? 'A' : 'B'}` }) : null,
      scene.you === s.seat ? el('span', { class: 'badge you', text: 'you' }) : null,
      s.abandoned ? el('span', { class: 'badge gone', text: 'abandoned' }) : null,
      scene.turn === s.seat ? el('span', { class: 'badge turn', text: 'to move' }) : null,
    );
    const scoreWord = scene.rules?.scoring === 'penalty' ? 'penalty' : scene.rules?.teams ? 'team score' : 'score';
    const head = el('header', {},
      el('span', { class: 'name', text: s.name }),
      badges,
    );
    const stats = el('div', { class: 'stats' },
      el('span', { class: 'score', text: `${scoreWord} ${s.score ?? 0}` }),
      el('span', { class: 'count', text: `${s.handCount} ${s.handCount === 1 ? 'tile' : 'tiles'}` }),
      scene.clock && s.bankMs !== null ? el('span', { class: 'clock', 'data-clock-seat': s.seat, text: clockText(remainingMs(scene, s.seat)) }) : null,
    );
    const tiles = el('div', { class: 'hand-row' });
    if (s.faceUp) {
      for (const t of s.faceUp) tiles.append(faceUpTile(t, 'small'));
    } else if (scene.you !== s.seat) {
      for (let i = 0; i < s.handCount; i++) tiles.append(backTile());
    }
    card.append(head, stats, tiles);
    $(`seat-${places[s.seat]}`).append(card);
  }
}

function faceUpTile(text, size) {
  const t = canonical(text);
  const [a, b] = halves(t);
  return el('span', { class: `face-up ${size}`, 'data-tile': t, role: 'img', 'aria-label': tileLabel(a, b) }, tileSvg(t));
}

function drawInfo(scene) {
  const info = $('table-info');
  info.replaceChildren();
  if (scene.roundNumber != null) info.append(el('span', { class: 'chip', text: `round ${scene.roundNumber}` }));
  if (scene.boneyard != null) info.append(el('span', { class: 'chip', text: `boneyard ${scene.boneyard}` }));
  const ends = scene.layout?.ends ?? [];
  if (ends.length) {
    info.append(el('span', { class: 'chip', text: `ends ${ends.map((e) => `${e.end} ${e.value}${e.double ? ' (double)' : ''}`).join(' · ')}` }));
  }
  if (scene.rules?.scoring === 'fives' && scene.layout?.count != null && scene.layout.lead) {
    const scores = scene.layout.count > 0 && scene.layout.count % 5 === 0;
    info.append(el('span', { class: `chip ${scores ? 'scores' : ''}`, text: `count ${scene.layout.count}` }));
  }
  if (scene.unclaimed) {
    info.append(el('span', { class: 'chip alert', text: `${scene.seats[scene.unclaimed.seat]?.name} left ${scene.unclaimed.points} unclaimed: muggins!` }));
  }
}

function drawSide(scene) {
  const list = $('moves');
  list.replaceChildren(...scene.lines.map((l) => el('li', { text: l })));
  const results = $('results');
  results.replaceChildren();
  if (scene.result) {
    results.append(el('p', { class: 'match-result', text: describeMatch(scene.names, scene.result) }));
  }
  // Every round, the latest first and open: a match to 150 may take ten rounds, and the
  // hands each ended with are what one looks back at.
  const rounds = scene.rounds ?? (scene.lastRound ? [scene.lastRound] : []);
  const latest = rounds[rounds.length - 1]?.number;
  const roundList = el('ol', { class: 'rounds', reversed: true });
  for (const r of [...rounds].reverse()) {
    const open = r.number === latest ? !state.closedRounds.has(r.number) : state.openRounds.has(r.number);
    const box = el('details', {
      class: `round-result${r.number === latest ? ' latest' : ''}`,
      'data-round': r.number,
      open,
      ontoggle: (e) => {
        const set = r.number === latest ? state.closedRounds : state.openRounds;
        if (e.target.open === (r.number === latest)) set.delete(r.number);
        else set.add(r.number);
      },
    }, el('summary', { text: describeRound(scene.names, r) }));
    r.hands.forEach((hand, seat) => {
      const row = el('div', { class: 'revealed' }, el('span', { class: 'who', text: `${seatName(scene.names, seat)}:` }));
      if (!hand.length) row.append(el('span', { class: 'empty', text: 'out' }));
      for (const t of hand) row.append(faceUpTile(t, 'tiny'));
      box.append(row);
    });
    roundList.append(el('li', {}, box));
  }
  if (rounds.length) results.append(roundList);
  $('results-section').hidden = !scene.result && !rounds.length;
}

function drawTitle(scene) {
  const preset = scene.preset ? scene.preset.replace('_', ' ') : 'domino';
  $('title').textContent = `${preset}${scene.rules ? ` · double-${scene.rules.max_pip}` : ''}`;
  const status = replaying ? 'replay' : scene.status;
  $('status').textContent = status;
  $('status').dataset.status = status;
  document.title = `${preset} · ${status} · dominoes`;
  const replayLink = $('replay-link');
  replayLink.hidden = replaying || scene.status !== 'finished';
}

// ----- playing -----

function drawHand(scene) {
  const area = $('hand-area');
  if (!seatToken() || replaying || !scene.hand) {
    area.hidden = true;
    return;
  }
  area.hidden = false;
  const plays = scene.legal.filter((m) => m.type === 'play');
  const hand = $('hand');
  hand.replaceChildren();
  // While a tile waits for its end, the others step back, so the one chosen stands out.
  hand.classList.toggle('choosing', Boolean(state.choosing));
  for (const text of scene.hand) {
    const t = canonical(text);
    const moves = plays.filter((m) => canonical(m.tile) === t);
    const [a, b] = halves(t);
    const button = el('button', {
      type: 'button',
      class: `hand-tile ${moves.length ? 'playable' : ''} ${state.choosing === t ? 'chosen' : ''}`,
      'data-tile': t,
      'aria-label': `${tileLabel(a, b)}${moves.length ? ', playable' : ''}${state.choosing === t ? ', chosen' : ''}`,
      'aria-pressed': moves.length ? String(state.choosing === t) : false,
      disabled: !moves.length || state.busy,
      onclick: () => chooseTile(t, moves),
    }, tileSvg(t));
    hand.append(button);
  }
  const actions = $('actions');
  actions.replaceChildren();
  if (state.choosing) {
    const moves = plays.filter((m) => canonical(m.tile) === state.choosing);
    actions.append(el('span', { class: 'prompt', text: `Play ${state.choosing} on:` }));
    for (const m of moves) {
      const end = scene.layout?.ends?.find((e) => e.end === m.end);
      actions.append(el('button', { type: 'button', class: 'end-choice', 'data-end': m.end, disabled: state.busy, onclick: () => send(m), text: `${m.end}${end ? ` (${end.value})` : ''}${m.points ? ` +${m.points}` : ''}` }));
    }
    actions.append(el('button', { type: 'button', class: 'quiet', onclick: () => { state.choosing = null; render(); }, text: 'cancel' }));
  } else {
    for (const m of scene.legal.filter((m) => m.type !== 'play')) {
      const label = { draw: 'Draw a tile', pass: 'Pass', muggins: `Muggins! (+${m.points ?? 0})` }[m.type] ?? m.type;
      actions.append(el('button', { type: 'button', class: `action ${m.type}`, 'data-move': m.type, disabled: state.busy, onclick: () => send(m), text: label }));
    }
    if (scene.status === 'playing') {
      actions.append(el('button', {
        type: 'button',
        class: `action resign ${state.confirmResign ? 'confirm' : ''}`,
        'data-move': 'resign',
        disabled: state.busy,
        onclick: () => {
          if (!state.confirmResign) {
            state.confirmResign = true;
            render();
            return;
          }
          state.confirmResign = false;
          send({ type: 'resign' });
        },
        text: state.confirmResign ? 'Really resign?' : 'Resign',
      }));
    }
  }
  const you = scene.you;
  const prompt = scene.status !== 'playing' ? '' : scene.turn === you ? 'Your turn' : `Waiting for ${scene.seats[scene.turn]?.name ?? 'the others'}`;
  $('hand-title').textContent = `Your hand${prompt ? ` · ${prompt}` : ''}`;
  $('message').textContent = state.message;
}

function chooseTile(tile, moves) {
  const ends = new Set(moves.map((m) => m.end ?? null));
  if (ends.size <= 1) {
    send(moves[0]);
    return;
  }
  state.choosing = tile;
  render();
  document.querySelector('.end-choice')?.focus();
}

async function send(move) {
  const body = { ...move };
  delete body.points;
  state.busy = true;
  state.choosing = null;
  state.message = '';
  render();
  try {
    const answer = await postMove(gameId, token, body);
    delete answer.events;
    state.view = answer;
    state.receivedAt = performance.now();
    await refreshLog();
  } catch (err) {
    state.message = `That move was refused: ${err.message}`;
    await refresh();
  } finally {
    state.busy = false;
    render();
    const next = document.querySelector('.hand-tile.playable:not([disabled])') ?? document.querySelector('#actions button:not([disabled])');
    if (next && document.activeElement === document.body) next.focus();
  }
}

// ----- live -----

/** A selector for the focused control, so that it keeps the focus when redrawn. */
function focusKey() {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  if (e.closest('#hand') && e.dataset.tile) return `#hand [data-tile="${e.dataset.tile}"]`;
  if (e.dataset.move) return `#actions [data-move="${e.dataset.move}"]`;
  if (e.dataset.end) return `#actions [data-end="${e.dataset.end}"]`;
  return null;
}

function render() {
  if (state.scene === undefined && !state.view) return;
  const focused = focusKey();
  draw();
  if (focused && document.activeElement === document.body) document.querySelector(focused)?.focus();
}

function draw() {
  const scene = replaying ? state.scene : sceneOfView(state.view, state.log);
  if (!replaying) state.scene = scene;
  drawTitle(scene);
  drawSeats(scene);
  drawLayout(scene);
  drawInfo(scene);
  drawSide(scene);
  drawHand(scene);
  $('page').dataset.version = replaying ? `step-${state.step}` : String(state.view.version);
}

/** The token to send: none once the server refused it, so the page reads as a spectator. */
const seatToken = () => (state.tokenRefused ? null : token);

/**
 * Gives the token up and says why where anyone sees it: the hand's message box is not
 * drawn for a spectator, and a page left on "Setting the table…" tells nothing.
 */
function refuseToken(reason) {
  state.tokenRefused = reason;
  // What was read with the token may hold the seat's own draws: read it again as anyone.
  state.log = { start: [], entries: [] };
  state.message = '';
  const notice = $('trouble');
  notice.textContent = `This token was refused (${reason}): watching as a spectator.`;
  notice.dataset.kind = 'token';
  notice.hidden = false;
}

async function refreshLog() {
  const known = state.log.entries.length ? state.log.entries[state.log.entries.length - 1].index : 0;
  const more = await readLog(gameId, seatToken(), known);
  if (known === 0) state.log.start = more.start;
  state.log.entries.push(...more.entries);
}

let refreshing = null;
let again = false;
/** Reads the view and the new log entries; calls made meanwhile are folded into one more. */
async function refresh() {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      try {
        const view = await readView(gameId, seatToken());
        await refreshLog();
        state.view = view;
        state.receivedAt = performance.now();
      } catch (err) {
        // 401: no seat has this token (mistyped, cut short, another game's); 403: a
        // player's key for a seat not bound to it.
        if ((err.status === 401 || err.status === 403) && seatToken()) {
          refuseToken(err.message);
          again = true;
        } else {
          showTrouble(err.status === 404 ? 'No such game (or it has expired).' : `Could not read the game: ${err.message}`);
          if (err.status === 404) stopEvents?.();
          return;
        }
      }
      render();
    } while (again);
  })();
  try {
    await refreshing;
  } finally {
    refreshing = null;
  }
}

function showTrouble(text) {
  $('trouble').textContent = text;
  $('trouble').hidden = false;
}

let stopEvents = null;

async function live() {
  // A header cannot carry such a token: fetch would throw before asking anything.
  if (token && !/^[\x21-\x7e]+$/.test(token)) refuseToken('it holds characters no token has');
  await refresh();
  if (!state.view) return;
  follow();
  // A hidden tab gives its stream back (a browser opens few connections to one server),
  // and catches up when shown again.
  document.addEventListener('visibilitychange', () => {
    if (state.view?.status === 'finished') return;
    if (document.hidden) {
      stopEvents?.();
      stopEvents = null;
    } else if (!stopEvents) {
      refresh();
      follow();
    }
  });
  setInterval(tickClocks, 250);
}

function follow() {
  stopEvents = followEvents(gameId, (_version, status) => {
    if (state.view && _version <= state.view.version) return;
    refresh().then(() => {
      if (status === 'finished' && state.view?.status === 'finished') {
        stopEvents?.();
        $('connection').textContent = '';
      }
    });
  }, (readyState) => {
    // The stream of a finished game ends for good: nothing to reconnect to.
    const over = state.view?.status === 'finished';
    if (over) stopEvents?.();
    $('connection').textContent = readyState === EventSource.CONNECTING && !over ? 'reconnecting…' : '';
  });
  if (state.view.status === 'finished') stopEvents();
}

function tickClocks() {
  const scene = state.scene;
  if (!scene?.clock) return;
  for (const node of document.querySelectorAll('[data-clock-seat]')) {
    const seat = Number(node.dataset.clockSeat);
    node.textContent = clockText(remainingMs(scene, seat));
    node.classList.toggle('low', scene.turn === seat && remainingMs(scene, seat) < 10000);
  }
}

// ----- replay -----

async function replay() {
  $('replay-bar').hidden = false;
  let exported;
  let log;
  try {
    [exported, log] = await Promise.all([readExport(gameId), readLog(gameId, null, 0)]);
  } catch (err) {
    showTrouble(err.status === 412 ? 'A replay is there once the game is finished.' : err.status === 404 ? 'No such game (or it has expired).' : `Could not read the game: ${err.message}`);
    $('replay-bar').hidden = true;
    return;
  }
  const steps = replaySteps(exported, log);
  // Moves so far, in words, up to the step shown.
  const show = (i) => {
    state.step = Math.max(0, Math.min(steps.length - 1, i));
    const lines = steps.slice(0, state.step + 1).flatMap((s) => s.lines);
    state.scene = { ...steps[state.step], lines: lines.slice(-8) };
    render();
    $('step').textContent = `step ${state.step} of ${steps.length - 1}`;
    $('first').disabled = $('prev').disabled = state.step === 0;
    $('last').disabled = $('next').disabled = state.step === steps.length - 1;
  };
  $('first').onclick = () => show(0);
  $('prev').onclick = () => show(state.step - 1);
  $('next').onclick = () => show(state.step + 1);
  $('last').onclick = () => show(steps.length - 1);
  document.addEventListener('keydown', (e) => {
    if (e.target.closest?.('input, textarea')) return;
    const to = { ArrowLeft: state.step - 1, ArrowRight: state.step + 1, Home: 0, End: steps.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    show(to);
  });
  show(0);
}

// ----- start -----

window.addEventListener('hashchange', () => location.reload());
let resizeTimer = null;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => state.scene && drawLayout(state.scene), 150);
});
$('replay-link').href = '#replay';
$('live-link').hidden = !replaying;
$('live-link').href = location.pathname;
if (replaying) replay();
else live();
