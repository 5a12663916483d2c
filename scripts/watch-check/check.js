// Headless Chromium on the watch page (/watch/{id}) of a running server:
//   node check.js <server URL> <screenshot folder>
// 1. a spectator sees every layout tile and no other face-up tile, and one face-down
//    tile per tile in each hand;
// 2. with #token=... the seat's hand is drawn face up, and the token never appears in a
//    request's address;
// 3. a move made while the page is open appears without a reload;
// 4. a person plays a whole game against a bot by clicking (and with the keyboard);
//    among several playable tiles the one under the pointer, and the one waiting for its
//    end, is marked apart from the others;
// 5. the replay of that game steps to its end, by buttons and by arrow keys;
// 6. a game of three rounds shows every round's result, live and in its replay;
// 7. a token the server refuses (or that no header can carry) leaves the page a
//    spectator's, with the reason shown;
// 8. at 390 px on a 1x screen every pip is at least 4 px wide;
// 9. a player's page draws each rated preset's rating over its games with the deviation
//    as a band, and lists its recent games with the opponent, result and rating change,
//    each linking to its replay, every game reached a page at a time;
// 10. the leaderboard lists the board in order, a provisional player marked;
// 11. the lobby names each game's players (a player linking to its page), escaping them;
// 12. a tournament's page follows a round robin of levels from its registration to its
//     end: standings, every round with its games and byes, the crosstable, the name as text,
//     a winner line once it is over, and every pairing card laid out alike at 390 px;
//     then a level's page lists that tournament, linking to it, with who won;
// 13. the home page (/) lists games in play, the latest finished games, tournaments and
//     every leaderboard; /tournaments lists them by status, /leaderboard each preset's top;
//     the list pages use the width they are given (up to a readable maximum) at 1200 px,
//     and nothing sticks out sideways at 390 px;
// 14. a league's page (a pulling bot entered against two levels, the bot played here
//     through its stream) follows the league without a reload, from its event stream or,
//     on a server without one, by reading it every 5 s: the table in rank order with
//     rating ± deviation, margin, W-D-L and who is available, the matches counted each
//     linking to its games, each entrant's rating chart, the name as text; /, /leagues,
//     /watch and the bot's page link to it, and an unknown league's page says there is none;
// and screenshots at 390 and 1200 px of a 4-seat all_fives game with a spinner, a penalty
// game, a replay, a refused token and a game of three rounds are saved in the screenshot
// folder, with a player's page, a leaderboard, the lobby with names, a tournament and a
// league.
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');

const [base, shots] = process.argv.slice(2);
fs.mkdirSync(shots, { recursive: true });

async function api(method, url, body, token) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(base + url, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** A game with the given bots; the first free seat taken by "ada". */
async function gameWithMe(body) {
  const created = await api('POST', '/v1/games', body);
  const seat = await api('POST', `/v1/games/${created.game_id}/seats`, { name: 'ada' });
  return { id: created.game_id, token: seat.token };
}

/** Makes `count` of my moves (the first legal one each time) while the game plays on. */
async function playMoves(id, token, count, pick = (moves) => moves[0]) {
  let view = await api('GET', `/v1/games/${id}`, null, token);
  for (let i = 0; i < count && view.status === 'playing'; i++) {
    if (!view.legal_moves.length) {
      view = await api('GET', `/v1/games/${id}?after=${view.version}&wait=5`, null, token);
      continue;
    }
    const move = { ...pick(view.legal_moves) };
    delete move.points;
    view = await api('POST', `/v1/games/${id}/moves`, move, token);
  }
  return api('GET', `/v1/games/${id}`, null, token);
}

const layoutTiles = (layout) =>
  [layout.lead, ...Object.values(layout.arms).flat()].filter(Boolean).map(canonical).sort();
function canonical(t) {
  const [a, b] = t.split('-').map(Number);
  return a <= b ? `${a}-${b}` : `${b}-${a}`;
}

async function settled(page, version) {
  await page.waitForSelector(`#page[data-version="${version}"]`, { timeout: 15000 });
}

async function tilesOn(page) {
  return page.evaluate(() => {
    const all = [...document.querySelectorAll('[data-tile]')];
    const inLayout = all.filter((e) => e.closest('svg.layout')).map((e) => e.dataset.tile).sort();
    const inHand = all.filter((e) => e.closest('#hand')).map((e) => e.dataset.tile).sort();
    const revealed = all.filter((e) => e.closest('.round-result.latest')).map((e) => e.dataset.tile).sort();
    const elsewhere = all.filter((e) => !e.closest('svg.layout, #hand, .round-result')).map((e) => e.dataset.tile);
    const unlabelled = all.filter((e) => !e.getAttribute('aria-label')).length;
    const backs = document.querySelectorAll('.back').length;
    const backsWithValue = [...document.querySelectorAll('.back')].filter((b) => b.attributes.length > 2 || b.textContent).length;
    return { inLayout, inHand, revealed, elsewhere, unlabelled, backs, backsWithValue };
  });
}

/** The narrowest pip drawn (px), and how many: pips of closed rounds are not drawn. */
async function smallestPip(page) {
  return page.evaluate(() => {
    const sizes = [...document.querySelectorAll('circle.pip')]
      .map((c) => c.getBoundingClientRect().width)
      .filter((w) => w > 0);
    return { count: sizes.length, min: sizes.length ? Math.min(...sizes) : 0 };
  });
}

/** What the page draws as a hand tile's mark: lifted, ringed, lit. */
async function markOf(locator) {
  return locator.evaluate((e) => {
    const s = getComputedStyle(e);
    return [s.transform, s.borderTopColor, s.boxShadow, s.opacity].join(' | ');
  });
}

/** Every round_ended of a game's public log, first to last. */
async function roundsLogged(id) {
  const log = await api('GET', `/v1/games/${id}/log`);
  return [...(log.start ?? []), ...log.moves.flatMap((m) => m.events)]
    .filter((e) => e.type === 'round_ended').map((e) => e.result);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A pulling bot: keeps `key`'s player stream open (what makes it available to a league)
 * and plays every game it is given, the first legal move each time, until stopped.
 * Answers { stop, errors, games }.
 */
function pullingBot(key) {
  const halt = new AbortController();
  const errors = [];
  const games = new Set();
  const auth = { Authorization: `Bearer ${key}` };
  const play = async (id) => {
    if (games.has(id)) return;
    games.add(id);
    try {
      let view = null;
      // A league names its matches' games before it makes them: not found yet, wait.
      for (let i = 0; i < 100 && !view && !halt.signal.aborted; i++) {
        const res = await fetch(`${base}/v1/games/${id}`, { headers: auth, signal: halt.signal });
        if (res.ok) view = await res.json();
        else await sleep(300);
      }
      while (view && view.status !== 'finished' && !halt.signal.aborted) {
        if (!view.legal_moves?.length) {
          view = await api('GET', `/v1/games/${id}?after=${view.version}&wait=5`, null, key);
          continue;
        }
        const move = { ...view.legal_moves[0] };
        delete move.points;
        view = await api('POST', `/v1/games/${id}/moves`, move, key);
      }
    } catch (e) {
      if (!halt.signal.aborted) errors.push(`game ${id}: ${e}`);
    }
  };
  const listPlaying = async () => {
    const mine = await api('GET', '/v1/players/me/games?status=playing&per_page=100', null, key);
    mine.games.forEach((g) => play(g.game_id));
  };
  (async () => {
    const res = await fetch(`${base}/v1/players/me/events`, { headers: { ...auth, Accept: 'text/event-stream' }, signal: halt.signal });
    if (!res.ok) throw new Error(`the player's stream answered ${res.status}`);
    await listPlaying();
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
      for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const name = /^event: ?(.*)$/m.exec(block)?.[1];
        const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
        if (name === 'game_started') play(JSON.parse(data).game_id);
        if (name === 'resync') await listPlaying();
      }
    }
  })().catch((e) => {
    if (!halt.signal.aborted) errors.push(`stream: ${e}`);
  });
  return { stop: () => halt.abort(), errors, games };
}

/** Whether the server has a league's event stream (older ones answer 404). */
async function leagueStreamServed(id) {
  const halt = new AbortController();
  const res = await fetch(`${base}/v1/leagues/${id}/events`, { signal: halt.signal, headers: { Accept: 'text/event-stream' } });
  halt.abort();
  return res.status === 200;
}

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const addresses = [];
  const problems = [];
  context.on('request', (r) => addresses.push(r.url()));
  // Pages opened with a token meant to be refused log its 401 or 403: that one is expected.
  const refusing = new Set();
  // Pages opened on something that does not exist log the 404 they were meant to meet.
  const missing = new Set();
  context.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (refusing.has(m.page()) && /status of 40[13]/.test(m.text())) return;
    if (missing.has(m.page()) && /status of 404/.test(m.text())) return;
    problems.push(m.text());
  });
  const open = async (url, width = 1200, { refused = false, absent = false } = {}) => {
    const page = await context.newPage();
    if (refused) refusing.add(page);
    if (absent) missing.add(page);
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.setViewportSize({ width, height: width < 500 ? 780 : width > 1600 ? 1080 : 900 });
    await page.goto(base + url);
    return page;
  };

  // ---- 1 to 3: a 4-seat all_fives game with a spinner, ada against three bots ----
  const four = await gameWithMe({
    preset: 'all_fives', seats: 4, seed: 'watch-check four', clock: { bank_secs: 300 },
    bots: [{ seat: 1, level: 'greedy' }, { seat: 2, level: 'random' }, { seat: 3, level: 'expert' }],
  });
  // Onto the spinner's sides whenever ada can, so that the layout has four arms.
  const spinnerFirst = (moves) => moves.find((m) => m.end === 'up' || m.end === 'down') ?? moves[0];
  let view = await playMoves(four.id, four.token, 6, spinnerFirst);
  const arms = view.round.layout.arms;
  check(arms.up.length + arms.down.length > 0, `the 4-seat game has tiles on the spinner's sides (${arms.up.length} up, ${arms.down.length} down)`);
  const spectator = await open(`/watch/${four.id}`);
  await settled(spectator, view.version);
  let seen = await tilesOn(spectator);
  check(same(seen.inLayout, layoutTiles(view.round.layout)), `a spectator sees every layout tile (${seen.inLayout.length})`);
  check(seen.inHand.length === 0 && seen.elsewhere.length === 0, 'and no other face-up tile, outside the last round\'s revealed hands');
  const revealedWant = (view.last_round?.hands ?? []).flat().map(canonical).sort();
  check(same(seen.revealed, revealedWant), 'the revealed hands are the last round\'s');
  const handCounts = view.seats.reduce((n, s) => n + s.hand_count, 0);
  check(seen.backs === handCounts && seen.backsWithValue === 0, `one valueless face-down tile per tile in the hands (${seen.backs})`);
  check(seen.unlabelled === 0, 'every face-up tile has an aria-label');
  const names = await spectator.locator('.seat .name').allInnerTexts();
  check(names.includes('ada') && names.includes('greedy') && !names.some((n) => / bot$/.test(n)), `seats are named, a level by its level as on every page (${names.join(', ')})`);

  // Ada is to move (the bots answer within her moves): her clock counts down.
  const clock = spectator.locator('[data-clock-seat="0"]');
  const before = await clock.textContent();
  await spectator.waitForTimeout(1300);
  const after = await clock.textContent();
  check(view.round.turn === 0 && /^\d+:\d\d$/.test(before) && after !== before, `the clock of the seat to move counts down (${before}, then ${after})`);
  const bots = await spectator.locator('[data-clock-seat="1"]').count();
  check(bots === 0, 'a bot seat shows no clock');

  const player = await open(`/watch/${four.id}#token=${four.token}`);
  await settled(player, view.version);
  seen = await tilesOn(player);
  const mine = await api('GET', `/v1/games/${four.id}`, null, four.token);
  check(same(seen.inHand, mine.hand.map(canonical).sort()), `with the token, the hand is drawn face up (${seen.inHand.length})`);
  check(same(seen.inLayout, layoutTiles(mine.round.layout)), 'and the layout too');

  // A move made elsewhere shows on both pages without a reload.
  view = await playMoves(four.id, four.token, 1, spinnerFirst);
  await settled(spectator, view.version);
  await settled(player, view.version);
  seen = await tilesOn(spectator);
  check(same(seen.inLayout, layoutTiles(view.round.layout)), 'a move made while the page is open appears without a reload');

  for (const [page, name] of [[spectator, 'four-seats-spectator'], [player, 'four-seats-player']]) {
    await page.screenshot({ path: path.join(shots, `${name}-1200.png`), fullPage: true });
  }
  const wide = await open(`/watch/${four.id}`, 1920);
  await settled(wide, view.version);
  await wide.screenshot({ path: path.join(shots, 'four-seats-spectator-1920.png'), fullPage: true });
  const narrowSpectator = await open(`/watch/${four.id}`, 390);
  await settled(narrowSpectator, view.version);
  await narrowSpectator.screenshot({ path: path.join(shots, 'four-seats-spectator-390.png'), fullPage: true });
  const narrow = await open(`/watch/${four.id}#token=${four.token}`, 390);
  await settled(narrow, view.version);
  await narrow.screenshot({ path: path.join(shots, 'four-seats-player-390.png'), fullPage: true });
  const narrowWidth = await narrow.evaluate(() => document.documentElement.scrollWidth);
  check(narrowWidth <= 390, `at 390 px nothing sticks out sideways (${narrowWidth} px wide)`);
  for (const [page, who] of [[narrowSpectator, 'a spectator'], [narrow, 'a seat']]) {
    const pip = await smallestPip(page);
    const dpr = await page.evaluate(() => window.devicePixelRatio);
    check(dpr === 1 && pip.count > 0 && pip.min >= 4, `at 390 px on a 1x screen ${who}'s pips are 4 px or more (${pip.count} pips, the smallest ${pip.min.toFixed(1)} px)`);
  }

  // Each page holds an event stream, and a browser opens at most 6 connections to one
  // server over HTTP/1.1: pages done with are closed.
  for (const page of [spectator, player, wide, narrowSpectator, narrow]) await page.close();

  // ---- a penalty game (a start tile, penalty points), seen at both widths ----
  const penalty = await gameWithMe({ preset: 'penalty', seed: 'watch-check penalty', bots: [{ seat: 1, level: 'greedy' }] });
  view = await playMoves(penalty.id, penalty.token, 8);
  for (const width of [390, 1200]) {
    const page = await open(`/watch/${penalty.id}`, width);
    await settled(page, view.version);
    seen = await tilesOn(page);
    check(same(seen.inLayout, layoutTiles(view.round.layout)), `penalty game at ${width} px: every layout tile`);
    await page.screenshot({ path: path.join(shots, `penalty-spectator-${width}.png`), fullPage: true });
    await page.close();
  }

  // ---- 4: a whole game by clicking ----
  const short = await gameWithMe({ preset: 'all_fives', rules: { target: 25 }, seed: 'watch-check click', bots: [{ seat: 1, level: 'greedy' }] });
  const game = await open(`/watch/${short.id}#token=${short.token}`);
  await game.waitForSelector('#page[data-version]');
  let clicks = 0;
  let keys = 0;
  let hoverChecked = false;
  let chosenChecked = false;
  const deadline = Date.now() + 90000;
  for (;;) {
    const status = await game.locator('#status').textContent();
    if (status === 'finished') break;
    if (Date.now() > deadline) throw new Error('the clicked game did not finish in 90 s');
    const version = await game.locator('#page').getAttribute('data-version');
    const end = game.locator('.end-choice').first();
    const tile = game.locator('.hand-tile.playable:not([disabled])').first();
    const action = game.locator('#actions button[data-move="draw"], #actions button[data-move="pass"], #actions button[data-move="muggins"]').first();
    if (await end.count()) {
      if (!chosenChecked) {
        chosenChecked = true;
        const chosen = game.locator('.hand-tile.chosen');
        const others = game.locator('.hand-tile.playable:not(.chosen)');
        const pressed = await chosen.first().getAttribute('aria-pressed').catch(() => null);
        await game.waitForTimeout(200); // past the lift's transition
        const marks = { chosen: await markOf(chosen.first()), other: (await others.count()) ? await markOf(others.first()) : null };
        check(await chosen.count() === 1 && pressed === 'true' && marks.chosen !== marks.other,
          `a tile waiting for its end is marked as chosen (aria-pressed, and drawn apart: ${marks.chosen} vs ${marks.other})`);
        await game.locator('#hand-area').screenshot({ path: path.join(shots, 'chosen-tile-1200.png') });
      }
      await end.click();
    } else if (await tile.count()) {
      const playable = game.locator('.hand-tile.playable:not([disabled])');
      if (!hoverChecked && await playable.count() >= 2) {
        hoverChecked = true;
        // A tile focused from the keyboard is marked too: only the pointer's mark is looked at.
        await game.evaluate(() => document.activeElement?.blur());
        await playable.nth(0).hover();
        await game.waitForTimeout(200);
        const hovered = await markOf(playable.nth(0));
        const other = await markOf(playable.nth(1));
        check(hovered !== other, `among ${await playable.count()} playable tiles the one under the pointer is marked (${hovered} vs ${other})`);
        await game.locator('#hand-area').screenshot({ path: path.join(shots, 'hovered-tile-1200.png') });
        await game.mouse.move(0, 0);
      }
      // Every other play from the keyboard: focus the tile, Enter.
      if (clicks % 2) {
        await tile.focus();
        await game.keyboard.press('Enter');
        keys++;
      } else {
        await tile.click();
      }
      clicks++;
      // A tile that fits both ends asks which: the question is drawn after the click, so
      // wait for it or for the move, whichever comes.
      await game.waitForFunction(
        (v) => document.querySelector('.end-choice') || document.querySelector('#page').dataset.version !== v,
        version, { timeout: 15000 }).catch(() => {});
      if (await game.locator('.end-choice').count()) continue;
    } else if (await action.count()) {
      await action.click();
      clicks++;
    } else {
      await game.waitForTimeout(100);
      continue;
    }
    await game.waitForFunction((v) => document.querySelector('#page').dataset.version !== v, version, { timeout: 15000 })
      .catch(async (e) => {
        const message = await game.locator('#message').textContent();
        throw new Error(`the page stayed at version ${version} after a move (message: "${message}"): ${e.message}`);
      });
  }
  check(hoverChecked && chosenChecked, `the marks were seen (pointer: ${hoverChecked}, an end to choose: ${chosenChecked})`);
  const final = await api('GET', `/v1/games/${short.id}`);
  check(final.status === 'finished' && final.result != null, `a person played a whole game by clicking (${clicks} moves, ${keys} by keyboard)`);
  const resultText = await game.locator('.match-result').innerText().catch(() => '');
  check(/wins the match|Match drawn/.test(resultText), `the match result is shown: "${resultText}"`);
  await game.screenshot({ path: path.join(shots, 'clicked-game-finished-1200.png'), fullPage: true });

  // ---- 5: its replay, to the end ----
  const replay = await open(`/watch/${short.id}#replay`, 390);
  await replay.waitForSelector('#step:not(:empty)');
  const stepText = await replay.locator('#step').innerText();
  const total = Number(stepText.split(' of ')[1]);
  await replay.locator('#next').click();
  await replay.keyboard.press('ArrowRight');
  check((await replay.locator('#step').innerText()) === `step 2 of ${total}`, 'the replay steps by button and by arrow key');
  await replay.screenshot({ path: path.join(shots, 'replay-step-2-390.png'), fullPage: true });
  await replay.locator('#last').click();
  check((await replay.locator('#step').innerText()) === `step ${total} of ${total}`, `the replay steps to its end (${total} steps)`);
  seen = await tilesOn(replay);
  check(same(seen.inLayout, layoutTiles(final.round.layout)), 'the replay\'s last layout is the game\'s last layout');
  check(await replay.locator('#next').isDisabled(), 'there is no step past the end');
  await replay.keyboard.press('Home');
  check((await replay.locator('#step').innerText()) === `step 0 of ${total}`, 'Home goes back to the deal');
  seen = await tilesOn(replay);
  const deal = (await api('GET', `/v1/games/${short.id}/export`)).deals[0];
  const dealt = await replay.evaluate(() => [...document.querySelectorAll('.seat [data-tile]')].map((e) => e.dataset.tile).sort());
  check(same(dealt, deal.hands.flat().map(canonical).sort()), 'the replay shows every hand of the deal face up');
  await replay.setViewportSize({ width: 1200, height: 900 });
  await replay.keyboard.press('End');
  await replay.screenshot({ path: path.join(shots, 'replay-last-1200.png'), fullPage: true });

  // ---- replays of bots-only games: four seats in teams with a spinner, and penalty ----
  for (const body of [
    { preset: 'all_fives', seats: 4, rules: { teams: true }, seed: 'watch-check teams' },
    { preset: 'penalty', seed: 'watch-check penalty bots' },
  ]) {
    body.bots = Array.from({ length: body.seats ?? 2 }, (_, seat) => ({ seat, level: seat % 2 ? 'greedy' : 'random' }));
    const { game_id: id } = await api('POST', '/v1/games', body);
    let end = await api('GET', `/v1/games/${id}`);
    for (let i = 0; i < 60 && end.status !== 'finished'; i++) end = await api('GET', `/v1/games/${id}?after=${end.version}&wait=2`);
    const page = await open(`/watch/${id}#replay`, 1200);
    await page.waitForSelector('#step:not(:empty)');
    await page.keyboard.press('End');
    const steps = await page.locator('#step').textContent();
    seen = await tilesOn(page);
    check(end.status === 'finished' && same(seen.inLayout, layoutTiles(end.round.layout)),
      `the replay of a bots-only ${body.preset} game (${body.seats ?? 2} seats) ends on its last layout (${steps})`);
    const scores = await page.locator('.match-result').textContent();
    check(scores.endsWith(end.result.scores.join(' – ')), `and its result: "${scores}"`);
    await page.close();
  }

  // ---- 6: every round's result, live and in the replay ----
  {
    const body = { preset: 'all_fives', rules: { target: null, rounds: 3 }, seed: 'watch-check rounds',
      bots: [{ seat: 0, level: 'random' }, { seat: 1, level: 'greedy' }] };
    const { game_id: id } = await api('POST', '/v1/games', body);
    let end = await api('GET', `/v1/games/${id}`);
    for (let i = 0; i < 60 && end.status !== 'finished'; i++) end = await api('GET', `/v1/games/${id}?after=${end.version}&wait=2`);
    const want = (await roundsLogged(id)).map((r) => r.number).reverse();
    for (const width of [390, 1200]) {
      const page = await open(`/watch/${id}`, width);
      await settled(page, end.version);
      const shown = await page.locator('.round-result').evaluateAll((all) => all.map((e) => Number(e.dataset.round)));
      const sentences = await page.locator('.round-result summary').allInnerTexts();
      check(end.status === 'finished' && want.length === 3 && same(shown, want) && sentences.every((t, i) => t.startsWith(`Round ${want[i]} over`)),
        `at ${width} px the Results box shows every round's result, latest first (${shown.join(', ')} of ${want.join(', ')})`);
      seen = await tilesOn(page);
      check(same(seen.revealed, end.last_round.hands.flat().map(canonical).sort()), 'with the last round\'s hands open');
      await page.screenshot({ path: path.join(shots, `three-rounds-${width}.png`), fullPage: true });
      await page.close();
    }
    const page = await open(`/watch/${id}#replay`, 1200);
    await page.waitForSelector('#step:not(:empty)');
    check(await page.locator('.round-result').count() === 0, 'the replay\'s first step has no round result yet');
    await page.keyboard.press('End');
    const shown = await page.locator('.round-result').evaluateAll((all) => all.map((e) => Number(e.dataset.round)));
    check(same(shown, want), `the replay's last step shows every round's result (${shown.join(', ')})`);
    await page.close();
  }

  // ---- 7: a refused token: the spectator's view, and why ----
  view = await api('GET', `/v1/games/${penalty.id}`);
  for (const [fragment, what] of [
    ['token=dgt_not-a-token', 'a token no seat has'],
    [`token=${four.token}`, 'another game\'s token'],
    ['token=two%20words', 'a token no header can carry'],
  ]) {
    const page = await open(`/watch/${penalty.id}#${fragment}`, 390, { refused: true });
    await settled(page, view.version).catch(() => {});
    const title = await page.locator('#title').textContent();
    const notice = (await page.locator('#trouble').isVisible()) ? await page.locator('#trouble').textContent() : '';
    seen = await tilesOn(page);
    const handShown = await page.locator('#hand-area').isVisible();
    check(!/Setting the table/.test(title) && same(seen.inLayout, layoutTiles(view.round.layout)) && seen.inHand.length === 0 && !handShown
      && seen.backs === view.seats.reduce((n, s) => n + s.hand_count, 0),
      `${what}: the page falls back to the spectator's view (${seen.inLayout.length} layout tiles, ${seen.backs} face down)`);
    check(/refused/.test(notice) && /spectator/.test(notice), `and says why: "${notice}"`);
    if (fragment.startsWith('token=dgt_')) {
      for (const width of [390, 1200]) {
        await page.setViewportSize({ width, height: width < 500 ? 780 : 900 });
        await page.screenshot({ path: path.join(shots, `refused-token-${width}.png`), fullPage: true });
      }
    }
    await page.close();
  }

  // ---- the lobby lists an open game with a link to its table, and the game once started ----
  const waiting = await api('POST', '/v1/games', { preset: 'block', bots: [{ seat: 1, level: 'random' }] });
  const inPlay = await api('POST', '/v1/games', { preset: 'all_fives', bots: [{ seat: 1, level: 'random' }] });
  await api('POST', `/v1/games/${inPlay.game_id}/seats`, { name: 'cy' });
  const lobby = await open('/watch', 390);
  const playing = lobby.locator(`#live a[href="/watch/${inPlay.game_id}"]`);
  await playing.waitFor({ timeout: 10000 });
  check((await playing.textContent()) === 'all fives', 'the lobby lists a game that was in play before it opened');
  const link = lobby.locator(`#games a[href="/watch/${waiting.game_id}"]`);
  await link.waitFor({ timeout: 10000 });
  check((await link.textContent()) === 'block', 'the lobby lists an open game with a link to its table');
  await api('POST', `/v1/games/${waiting.game_id}/seats`, { name: 'bea' });
  const started = lobby.locator(`#live a[href="/watch/${waiting.game_id}"]`);
  await started.waitFor({ timeout: 10000 });
  check(await link.count() === 0, 'once its seats are taken it moves from the open games to the games in play');
  await lobby.screenshot({ path: path.join(shots, 'lobby-390.png'), fullPage: true });
  await started.click();
  await lobby.waitForSelector('#page[data-version]');
  check(/block/i.test(await lobby.locator('#title').textContent()), 'the link opens its table');
  await lobby.close();
  const connection = await game.locator('#connection').textContent();
  check(connection === '', `a finished game's page does not try to reconnect ("${connection}")`);

  // ---- 9. a player's page: a chart per rated preset, recent games with their replays ----
  const zed = await api('POST', '/v1/players', { name: 'zed' });
  const rated = [];
  for (let i = 0; i < 3; i++) {
    const made = await api('POST', '/v1/challenges', { opponents: ['greedy'], preset: 'block', rated: true }, zed.key);
    // A few moves each side, then zed resigns: a game both sides played in.
    const now = await playMoves(made.game_id, zed.key, 2);
    if (now.status === 'playing') await api('POST', `/v1/games/${made.game_id}/moves`, { type: 'resign' }, zed.key);
    rated.push(made.game_id);
  }
  const profile = await api('GET', '/v1/players/zed');
  const history = await api('GET', '/v1/players/zed/ratings/block/history');
  const me = await open('/players/zed', 1200);
  await me.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const drawn = await me.evaluate(() => {
    const chart = document.querySelector('.rating[data-preset="block"] svg.chart');
    return {
      points: Number(chart?.dataset.points ?? 0),
      dots: chart?.querySelectorAll('circle.rating-point').length ?? 0,
      band: chart?.querySelector('polygon.rating-band')?.getAttribute('points')?.split(' ').length ?? 0,
      line: Boolean(chart?.querySelector('polyline.rating-line')),
      figure: document.querySelector('.rating[data-preset="block"] .figure')?.textContent ?? '',
      title: document.getElementById('title').textContent,
    };
  });
  check(drawn.title === 'zed' && history.length === 3 && drawn.points === 4 && drawn.dots === 4 && drawn.band === 8 && drawn.line,
    `the player's page draws its block rating over its 3 rated games from the start, with the deviation as a band (${JSON.stringify(drawn)})`);
  check(drawn.figure.startsWith(`${profile.ratings.block.rating} ± ${profile.ratings.block.deviation}`) && /provisional/.test(drawn.figure),
    `and says the rating now, whole, marked provisional ("${drawn.figure}")`);
  const recent = await me.evaluate(() => [...document.querySelectorAll('#recent li')].map((li) => ({
    id: li.dataset.game,
    href: li.querySelector('a')?.getAttribute('href'),
    against: li.querySelector('.opponents')?.textContent,
    result: li.querySelector('.result')?.textContent,
    change: li.querySelector('.change')?.textContent,
  })));
  const changes = history.map((p, i) => p.rating - (i ? history[i - 1].rating : 1500));
  check(same(recent.map((g) => g.id), [...rated].reverse()) && recent.every((g) => g.href === `/watch/${g.id}#replay` && /greedy/.test(g.against) && /^lost \d+ – \d+$/.test(g.result)),
    `its recent games, newest first, name the opponent and the result and link to their replay (${JSON.stringify(recent[0])})`);
  check(same(recent.map((g) => g.change), [...changes].reverse().map((c) => `${c >= 0 ? '+' : '−'}${Math.abs(c)}`)),
    `and each one's rating change (${recent.map((g) => g.change).join(', ')})`);
  const axes = await me.evaluate(() => {
    const chart = document.querySelector('.rating[data-preset="block"] svg.chart');
    return {
      values: [...chart.querySelectorAll('text.axis.value')].map((t) => Number(t.textContent)),
      times: [...chart.querySelectorAll('text.axis.time')].map((t) => t.textContent),
      opponent: [...document.querySelectorAll('#recent li .opponents a.player')].map((a) => `${a.textContent} ${a.getAttribute('href')}`),
    };
  });
  const step = axes.values[1] - axes.values[0];
  check(axes.values.length >= 3 && axes.values.every((v, i) => v % step === 0 && (i === 0 || v - axes.values[i - 1] === step)) && /^(1|2|25|5)0*$/.test(String(step)),
    `the chart's values are round, ${step} apart (${axes.values.join(', ')})`);
  check(axes.times.length >= 1 && axes.times.every((t) => t.length > 0), `and it has a time axis (${axes.times.join(', ')})`);
  check(axes.opponent.length === 3 && axes.opponent.every((o) => o === 'greedy /players/greedy'),
    `a level is named as on the leaderboard, linking to its page (${axes.opponent[0]})`);
  // A game in which zed sat in seat 1: its own score still comes first.
  const second = await api('POST', '/v1/games', {
    preset: 'block', seed: 'watch-check seat 1', rules: { target: null, rounds: 1 }, bots: [{ seat: 0, level: 'greedy' }],
  });
  await api('POST', `/v1/games/${second.game_id}/seats`, {}, zed.key);
  await playMoves(second.game_id, zed.key, 100);
  const over = await api('GET', `/v1/games/${second.game_id}`);
  await me.reload();
  await me.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const seatOne = await me.locator(`#recent li[data-game="${second.game_id}"] .result`).textContent();
  const wantSeatOne = `${over.result.winner === 1 ? 'won' : 'lost'} ${over.result.scores[1]} – ${over.result.scores[0]}`;
  check(over.seats[1].player_id === profile.id && seatOne === wantSeatOne && over.result.scores[0] !== over.result.scores[1],
    `from seat 1 the player's own score comes first ("${seatOne}"; the scores by seat ${JSON.stringify(over.result.scores)})`);
  for (const width of [390, 1200]) {
    await me.setViewportSize({ width, height: width < 500 ? 780 : 900 });
    await me.screenshot({ path: path.join(shots, `player-${width}.png`), fullPage: true });
  }
  await me.click(`#recent a.preset[href="/watch/${rated[2]}#replay"]`);
  await me.waitForSelector('#page[data-version]');
  check(/replay/i.test(await me.locator('#status').textContent()), 'a recent game\'s link opens its replay');
  await me.close();
  // Every game a page at a time: 21 games are a page of 20 and one more, "Older" between.
  const pager = await api('POST', '/v1/players', { name: 'pager' });
  for (let i = 0; i < 21; i += 1) {
    const g = await api('POST', '/v1/games', { preset: 'block', bots: [{ seat: 1, level: 'random' }] });
    await api('POST', `/v1/games/${g.game_id}/seats`, {}, pager.key);
  }
  const paged = await open('/players/pager', 1200);
  await paged.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const firstPage = await paged.evaluate(() => ({
    items: document.querySelectorAll('#recent li').length,
    where: document.getElementById('games-where').textContent,
    older: document.getElementById('older').hidden ? null : document.getElementById('older').getAttribute('href'),
  }));
  await paged.click('#older');
  await paged.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const secondPage = await paged.evaluate(() => ({
    items: document.querySelectorAll('#recent li').length,
    where: document.getElementById('games-where').textContent,
    newer: document.getElementById('newer').hidden ? null : document.getElementById('newer').getAttribute('href'),
    older: !document.getElementById('older').hidden,
  }));
  check(firstPage.items === 20 && firstPage.older === '/players/pager?page=2' && firstPage.where === 'games 1 to 20 of 21, newest first'
    && secondPage.items === 1 && secondPage.where === 'games 21 to 21 of 21, newest first' && secondPage.newer === '/players/pager' && !secondPage.older,
    `a player's page reaches every game a page at a time (${JSON.stringify([firstPage, secondPage])})`);
  await paged.close();

  // ---- 10. the leaderboard: ranks, provisional players marked, names linking to pages ----
  const board = await api('GET', '/v1/leaderboard/block');
  const lead = await open('/leaderboard/block', 390);
  await lead.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const rows = await lead.evaluate(() => [...document.querySelectorAll('#rows tr')].map((tr) => ({
    name: tr.dataset.player,
    cells: [...tr.cells].map((c) => c.textContent),
    provisional: tr.classList.contains('provisional') && Boolean(tr.querySelector('.badge.provisional')),
    href: tr.querySelector('a')?.getAttribute('href'),
  })));
  check(same(rows.map((r) => r.name), board.players.map((p) => p.name)) && rows.length >= 2,
    `the leaderboard lists the board's players in order (${rows.map((r) => r.name).join(', ')})`);
  const zedRow = rows.find((r) => r.name === 'zed');
  const zedPlace = board.players.find((p) => p.name === 'zed');
  check(zedRow && zedRow.provisional && zedRow.href === '/players/zed' && zedRow.cells[2] === String(zedPlace.rating),
    `a provisional player is marked, with its whole rating and a link to its page (${JSON.stringify(zedRow)})`);
  for (const width of [390, 1200]) {
    await lead.setViewportSize({ width, height: width < 500 ? 780 : 900 });
    await lead.screenshot({ path: path.join(shots, `leaderboard-${width}.png`), fullPage: true });
  }
  await lead.close();

  // ---- 11. the lobby names the players, a player's name linking to its page, and escapes ----
  const odd = '<img src=x onerror="pwned=1">';
  const open1 = await api('POST', '/v1/games', { preset: 'draw', seats: 3, bots: [{ seat: 2, level: 'random' }] });
  await api('POST', `/v1/games/${open1.game_id}/seats`, { name: odd });
  const live = await api('POST', '/v1/challenges', { opponents: ['greedy'], preset: 'all_fives' }, zed.key);
  const lobby2 = await open('/watch', 1200);
  const named = lobby2.locator(`#live li:has(a[href="/watch/${live.game_id}"]) a.player[href="/players/zed"]`);
  await named.waitFor({ timeout: 10000 });
  check((await named.textContent()) === 'zed', 'the lobby names the players of a game in play, a player linking to its page');
  const waitingItem = lobby2.locator(`#games li:has(a[href="/watch/${open1.game_id}"]) .players`);
  await waitingItem.waitFor({ timeout: 10000 });
  const shown = await waitingItem.textContent();
  const injected = await lobby2.evaluate(() => Boolean(window.pwned) || document.querySelectorAll('#games img').length > 0);
  check(shown.includes(odd) && shown.includes('free seat') && shown.includes('random bot') && !injected,
    `and an open game's seats, an anonymous name shown as text, never as markup ("${shown}")`);
  for (const width of [390, 1200]) {
    await lobby2.setViewportSize({ width, height: width < 500 ? 780 : 900 });
    await lobby2.screenshot({ path: path.join(shots, `lobby-names-${width}.png`), fullPage: true });
  }
  await lobby2.close();

  // ---- 12. a tournament's page: a round robin of levels followed live to its end ----
  const tess = await api('POST', '/v1/players', { name: 'tess' });
  const cupName = '<img src=x onerror="pwned=1"> cup';
  const cup = await api('POST', '/v1/tournaments', {
    name: cupName, preset: 'block', format: 'round_robin', rules: { target: null, rounds: 1 },
    levels: ['random', 'greedy'],
  }, tess.key);
  const tour = await open(`/tournaments/${cup.id}`, 1200);
  await tour.waitForSelector('#page[data-status="registering"]', { timeout: 10000 });
  const entered = async () => tour.locator('#standings-rows tr').count();
  const firstEntered = await entered();
  await api('POST', `/v1/tournaments/${cup.id}/players`, { level: 'expert' }, tess.key);
  await tour.waitForSelector('#standings-rows tr[data-player="expert"]', { timeout: 10000 }).catch(() => {});
  check(firstEntered === 2 && (await entered()) === 3, `a tournament's page lists its players while it registers, one who joins without a reload (${firstEntered}, then ${await entered()})`);
  await api('POST', `/v1/tournaments/${cup.id}/start`, null, tess.key);
  // Followed from its stream: no reload between the registration and the end.
  await tour.waitForSelector('#page[data-status="finished"]', { timeout: 60000 });
  const done = await api('GET', `/v1/tournaments/${cup.id}`);
  const drawnCup = await tour.evaluate(() => ({
    title: document.getElementById('title').textContent,
    injected: Boolean(window.pwned) || document.querySelectorAll('main img, header img').length > 0,
    standings: [...document.querySelectorAll('#standings-rows tr')].map((tr) => ({
      id: tr.dataset.player, cells: [...tr.cells].map((c) => c.textContent), href: tr.querySelector('a')?.getAttribute('href'),
    })),
    cross: [...document.querySelectorAll('#crosstable tbody tr')].map((tr) => ({
      id: tr.dataset.player,
      cells: [...tr.querySelectorAll('td.result, td.self')].map((td) => ({ against: td.dataset.against ?? null, text: td.textContent, href: td.querySelector('a')?.getAttribute('href') ?? null })),
    })),
    rounds: [...document.querySelectorAll('#past details')].map((d) => Number(d.dataset.round)),
    links: [...document.querySelectorAll('#past a.game')].map((a) => a.getAttribute('href')),
    byes: [...document.querySelectorAll('#past li.bye')].map((li) => `${li.dataset.round} ${li.dataset.player}`),
    current: !document.getElementById('current-section').hidden,
  }));
  check(drawnCup.title === cupName && !drawnCup.injected, `the tournament's name is shown as text, never as markup ("${drawnCup.title}")`);
  const half = (x) => { const q = Math.round(x * 4); const part = ['', '¼', '½', '¾'][q % 4]; return Math.floor(q / 4) === 0 && part ? part : `${Math.floor(q / 4)}${part}`; };
  check(same(drawnCup.standings.map((r) => r.id), done.players.map((p) => p.id))
    && drawnCup.standings.every((r, i) => r.cells[0] === String(done.players[i].rank) && r.cells[1].startsWith(done.players[i].name)
      && r.cells[2] === half(done.players[i].score) && r.cells[3] === half(done.players[i].buchholz) && r.cells[4] === half(done.players[i].sonneborn_berger)
      && r.href === `/players/${done.players[i].name}`),
    `the standings are the tournament's, in order, with score, Buchholz and SB (${drawnCup.standings.map((r) => r.cells.join(' ')).join('; ')})`);
  const expectCell = (row, col) => {
    const p = done.pairings.find((q) => (q.a === row && q.b === col) || (q.a === col && q.b === row));
    if (!p) return null;
    return { text: p.result === 'draw' ? '½' : p.result === (p.a === row ? 'a' : 'b') ? '1' : '0', href: `/watch/${p.games[0]}#replay` };
  };
  const crossOk = drawnCup.cross.length === 3 && drawnCup.cross.every((r, i) => r.id === done.players[i].id && r.cells.length === 3
    && r.cells.every((c, j) => (j === i ? c.text === '×' : same({ text: c.text, href: c.href }, expectCell(r.id, done.players[j].id)))));
  check(crossOk, `the crosstable gives each pairing's result from both sides, each linking to its game (${drawnCup.cross.map((r) => r.cells.map((c) => c.text).join('')).join(' / ')})`);
  const allGames = done.pairings.flatMap((p) => p.games.map((g) => `/watch/${g}#replay`));
  check(same(drawnCup.rounds, [3, 2, 1]) && !drawnCup.current && same([...drawnCup.links].sort(), [...allGames].sort()) && allGames.length === 6,
    `every round is listed once it is over, each game linking to its replay (${drawnCup.links.length} links)`);
  check(same([...drawnCup.byes].sort(), done.byes.map((b) => `${b.round} ${b.player}`).sort()) && drawnCup.byes.length === 3,
    `and each round's bye (${drawnCup.byes.join(', ')})`);
  const winner = await tour.locator('#winner').textContent();
  check(winner.startsWith(`Winner: ${done.players[0].name}, with `) && await tour.locator('#winner').isVisible(),
    `a finished tournament says who won ("${winner}")`);
  // Every pairing card the same way: at 390 px the result under the names, at 1200 beside.
  const cards = async () => tour.evaluate(() => [...document.querySelectorAll('#past details[open] li.pairing')].map((li) => {
    const names = li.querySelector('.players').getBoundingClientRect();
    const result = li.querySelector('.result').getBoundingClientRect();
    return { below: result.top >= names.bottom - 1, beside: Math.abs(result.top - names.top) < names.height };
  }));
  for (const width of [390, 1200]) {
    await tour.setViewportSize({ width, height: width < 500 ? 780 : 900 });
    await tour.screenshot({ path: path.join(shots, `tournament-${width}.png`), fullPage: true });
    const laid = await cards();
    const alike = width < 500 ? laid.every((c) => c.below) : laid.every((c) => c.beside);
    check(laid.length >= 1 && alike, `at ${width} px every pairing card puts its result ${width < 500 ? 'under' : 'beside'} the names (${laid.length} cards)`);
  }
  await tour.click(`#crosstable a[href="${drawnCup.cross[0].cells[1].href}"]`);
  await tour.waitForSelector('#page[data-version]');
  check(/replay/i.test(await tour.locator('#status').textContent()), 'a crosstable cell opens its game\'s replay');
  await tour.close();
  // A level's page lists the tournaments it was entered in, each linking to its page.
  const levelPage = await open('/players/expert', 1200);
  await levelPage.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const listedCups = await levelPage.evaluate(() => ({
    shown: !document.getElementById('tournaments-section').hidden,
    items: [...document.querySelectorAll('#tournaments li')].map((li) => ({
      href: li.querySelector('a.tournament-name')?.getAttribute('href'),
      name: li.querySelector('a.tournament-name')?.textContent,
      winner: li.querySelector('.winner')?.textContent ?? null,
    })),
    injected: Boolean(window.pwned) || document.querySelectorAll('main img').length > 0,
  }));
  const listedCup = listedCups.items.find((i) => i.href === `/tournaments/${cup.id}`);
  check(listedCups.shown && listedCup && listedCup.name === cupName && listedCup.winner === `won by ${done.players[0].name}` && !listedCups.injected,
    `a player's page lists its tournaments, each linking to its page, with who won (${JSON.stringify(listedCups.items)})`);
  for (const width of [390, 1200]) {
    await levelPage.setViewportSize({ width, height: width < 500 ? 780 : 900 });
    await levelPage.screenshot({ path: path.join(shots, `player-tournaments-${width}.png`), fullPage: true });
  }
  await levelPage.close();
  // ---- 13. the front door and the indexes ----
  const later = await api('POST', '/v1/tournaments', { name: 'Next week', preset: 'all_fives', format: 'swiss' }, tess.key);
  const finishedGames = await api('GET', '/v1/games?status=finished&per_page=8');
  const playingGames = await api('GET', '/v1/games?status=playing&per_page=8');
  const presets = await api('GET', '/v1/presets');
  const widthOf = async (page) => page.evaluate(() => ({
    main: document.querySelector('main').getBoundingClientRect().width,
    scroll: document.documentElement.scrollWidth,
  }));
  const home = await open('/', 1200);
  await home.waitForSelector('#page[data-ready]', { timeout: 10000 });
  await home.waitForSelector('#boards a', { timeout: 10000 });
  const front = await home.evaluate(() => ({
    live: [...document.querySelectorAll('#live li')].map((li) => li.dataset.game),
    finished: [...document.querySelectorAll('#finished li a.preset')].map((a) => a.getAttribute('href')),
    tournaments: [...document.querySelectorAll('#tournaments li')].map((li) => ({ id: li.dataset.tournament, text: li.textContent, href: li.querySelector('a')?.getAttribute('href') })),
    boards: [...document.querySelectorAll('#boards a')].map((a) => a.getAttribute('href')),
  }));
  check(finishedGames.games.length > 0 && same(front.finished, finishedGames.games.map((g) => `/watch/${g.game_id}#replay`)),
    `the home page lists the latest finished games, each opening its replay (${front.finished.length})`);
  check(same(front.live, playingGames.games.map((g) => g.game_id)), `and the games in play (${front.live.length})`);
  const cupItem = front.tournaments.find((t) => t.id === cup.id);
  check(cupItem && cupItem.href === `/tournaments/${cup.id}` && cupItem.text.includes(`won by ${done.players[0].name}`) && front.tournaments.some((t) => t.id === later.id),
    `and tournaments, registering and finished, a finished one with its winner (${cupItem?.text})`);
  check(same(front.boards, presets.map((p) => `/leaderboard/${p.name}`)), `and a link to every preset's leaderboard (${front.boards.length})`);
  const index = await open('/tournaments', 1200);
  await index.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const byStatus = await index.evaluate(() => Object.fromEntries([...document.querySelectorAll('section[data-status]')].map((s) => [
    s.dataset.status, [...s.querySelectorAll('li')].map((li) => li.dataset.tournament)])));
  check(byStatus.finished?.includes(cup.id) && byStatus.registering?.includes(later.id) && !byStatus.running?.includes(cup.id),
    `/tournaments lists each tournament under its status (${JSON.stringify(byStatus)})`);
  const boards = await open('/leaderboard', 1200);
  await boards.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const blockTop = await boards.evaluate(() => [...document.querySelectorAll('section[data-preset="block"] li')].map((li) => li.dataset.player));
  const boardsShown = await boards.locator('section[data-preset]').count();
  check(same(blockTop, board.players.slice(0, 5).map((p) => p.name)) && boardsShown === presets.length,
    `/leaderboard shows every preset's board, block's top in order (${blockTop.join(', ')})`);
  for (const [page, name] of [[home, 'home'], [index, 'tournaments'], [boards, 'leaderboards']]) {
    for (const width of [390, 1200]) {
      await page.setViewportSize({ width, height: width < 500 ? 780 : 900 });
      await page.screenshot({ path: path.join(shots, `${name}-${width}.png`), fullPage: true });
      const w = await widthOf(page);
      check(w.scroll <= width, `${name} at ${width} px: nothing sticks out sideways (${w.scroll} px wide)`);
    }
    await page.close();
  }
  // The list pages use the width they are given, up to a readable maximum.
  for (const url of ['/', '/watch', '/players/zed', '/leaderboard/block', `/tournaments/${cup.id}`, '/tournaments', '/leaderboard']) {
    const page = await open(url, 1200);
    await page.waitForSelector('#page[data-ready], #page[data-status], .page', { timeout: 10000 });
    const w = await widthOf(page);
    check(w.main >= 1100, `${url} at 1200 px uses the width it is given (main ${Math.round(w.main)} px)`);
    await page.close();
  }
  // ---- 14. a league's page: a pulling bot against two levels, followed live ----
  const leagueName = '<img src=x onerror="pwned=1"> league';
  const made = await api('POST', '/v1/leagues', {
    name: leagueName, preset: 'block', rules: { target: null, rounds: 1 }, deals_per_match: 1, max_concurrent: 1,
    levels: ['random', 'greedy'],
  }, tess.key);
  const streamed = await leagueStreamServed(made.id);
  console.log(`     (the league's event stream is ${streamed ? 'served: the page follows it' : 'not served: the page reads the league every 5 s'})`);
  // Without the stream its page meets a 404 when it asks for it, and says so in the console.
  const lg = await open(`/leagues/${made.id}`, 1200, { absent: !streamed });
  await lg.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const firstRows = await lg.locator('#rows tr').count();
  const lea = await api('POST', '/v1/players', { name: 'lea', bot: true });
  await api('POST', `/v1/leagues/${made.id}/entrants`, null, lea.key);
  const leaBot = pullingBot(lea.key);
  // No reload from here: a match made, played through and counted reaches the page.
  await lg.waitForSelector('#rows tr[data-entrant="' + lea.player.id + '"] .badge.available', { timeout: 30000 });
  check(firstRows === 2, `a league's page lists its levels before anyone enters (${firstRows} rows), then the bot that entered, available while its stream is open`);
  const firstNow = await lg.evaluate(() => [...document.querySelectorAll('#rows tr')].map((tr) => `${tr.dataset.entrant} ${tr.querySelector('td.now .badge')?.textContent}`));
  check(firstNow.length === 3 && firstNow.every((line) => line.endsWith(' available')), `the levels and the bot with its stream open are marked available (${firstNow.join(', ')})`);
  await lg.waitForSelector('#page:not([data-counted="0"])', { timeout: 90000 });
  // Stopped, the bot plays no more: the league stands still (its next match waits for its
  // moves), and the page can be held against it.
  leaBot.stop();
  // A match already played through may still be counted: the page is held against the
  // league as read before and after it is looked at, the same both times.
  let league = null;
  let drawnLeague = null;
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = await api('GET', `/v1/leagues/${made.id}`);
    await lg.waitForFunction((n) => Number(document.getElementById('page').dataset.counted) >= n
      && document.querySelectorAll('#recent li').length >= n && document.querySelectorAll('#recent a.game').length >= 2 * n,
    before.matches_counted, { timeout: 20000 });
    drawnLeague = await lg.evaluate(() => ({
      counted: Number(document.getElementById('page').dataset.counted),
      title: document.getElementById('title').textContent,
      injected: Boolean(window.pwned) || document.querySelectorAll('main img, header img').length > 0,
      rows: [...document.querySelectorAll('#rows tr')].map((tr) => ({
        id: tr.dataset.entrant, cells: [...tr.cells].map((c) => c.textContent), href: tr.querySelector('a')?.getAttribute('href'),
      })),
      recent: [...document.querySelectorAll('#recent li')].map((li) => ({
        id: li.dataset.match, links: [...li.querySelectorAll('a.game')].map((a) => a.getAttribute('href')),
      })),
      charts: [...document.querySelectorAll('#charts section.rating')].map((s) => ({ id: s.dataset.entrant, points: Number(s.querySelector('svg.chart').dataset.points) })),
    }));
    league = await api('GET', `/v1/leagues/${made.id}`);
    if (league.matches_counted === before.matches_counted && drawnLeague.counted === before.matches_counted) break;
    await sleep(1000);
  }
  check(drawnLeague.title === leagueName && !drawnLeague.injected, `the league's name is shown as text, never as markup ("${drawnLeague.title}")`);
  const fixed = (x) => (Math.abs(x).toFixed(1) === '0.0' ? '0.0' : `${x < 0 ? '−' : '+'}${Math.abs(x).toFixed(1)}`);
  // The table as it stood when the page drew it: the league read once the page had the counted matches.
  const tableOk = same(drawnLeague.rows.map((r) => r.id), league.entrants.map((e) => e.id))
    && drawnLeague.rows.every((r, i) => {
      const e = league.entrants[i];
      return r.cells[0] === String(e.rank) && r.cells[1].startsWith(e.name) && r.cells[2] === `${e.rating} ± ${e.deviation}`
        && r.cells[3].startsWith(e.matches ? fixed(e.margin_per_deal) : '–') && r.cells[4] === String(e.matches)
        && r.cells[5] === `${e.wins}–${e.draws}–${e.losses}`
        && r.href === `/players/${e.bot && !/^[0-9a-f]{32}$/.test(e.id) ? e.id : e.name}`;
    });
  check(tableOk, `the table is the league's, in rank order, with rating ± deviation, margin, matches and W-D-L, each name linking to its page (${drawnLeague.rows.map((r) => r.cells.slice(0, 6).join(' ')).join('; ')})`);
  const matchGames = await Promise.all(league.recent.map((r) => api('GET', `/v1/matches/${r.match_id}`)));
  check(same(drawnLeague.recent.map((r) => r.id), league.recent.map((r) => r.match_id))
    && drawnLeague.recent.every((r, i) => same(r.links, matchGames[i].games.map((g) => `/watch/${g.game_id}#replay`))),
  `the matches counted are listed newest first, each linking to the replay of each of its games (${drawnLeague.recent.map((r) => r.links.length).join(', ')} links)`);
  const charted = league.entrants.filter((e) => e.history.length);
  check(charted.length >= 2 && same(drawnLeague.charts, charted.map((e) => ({ id: e.id, points: e.history.length }))),
    `each entrant that played has its rating chart, a point a match (${drawnLeague.charts.map((c) => `${c.id}: ${c.points}`).join(', ')})`);
  for (const width of [390, 1200]) {
    await lg.setViewportSize({ width, height: width < 500 ? 780 : 900 });
    await lg.screenshot({ path: path.join(shots, `league-${width}.png`), fullPage: true });
    const w = await widthOf(lg);
    check(w.scroll <= width && (width < 500 || w.main >= 1100), `the league's page at ${width} px: nothing sticks out sideways (${w.scroll} px wide, main ${Math.round(w.main)} px)`);
  }
  // Its stream closed, the bot is away: the page says so, still without a reload (read
  // again every 15 s beside the league's stream, which tells of matches only).
  await lg.waitForSelector('#rows tr[data-entrant="' + lea.player.id + '"] .badge.away', { timeout: 45000 }).catch(() => {});
  check(await lg.locator('#rows tr[data-entrant="' + lea.player.id + '"] .badge.away').count() === 1, 'once its stream is closed the bot is marked away');
  check(leaBot.errors.length === 0 && leaBot.games.size >= 2, `the bot played its league games through its stream (${leaBot.games.size} games${leaBot.errors.length ? `; ${leaBot.errors.join('; ')}` : ''})`);
  await lg.setViewportSize({ width: 1200, height: 900 });
  await lg.click(`#recent a.game[href="${drawnLeague.recent[0].links[0]}"]`);
  await lg.waitForSelector('#page[data-version]');
  check(/replay/i.test(await lg.locator('#status').textContent()), 'a counted match\'s game link opens its replay');
  await lg.close();
  // Found without its id: the home page, /leagues, /watch, and the bot's own page.
  const home2 = await open('/', 390);
  await home2.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const homeLink = await home2.locator(`#leagues li[data-league="${made.id}"] a[href="/leagues/${made.id}"]`).count();
  const homeWidth = await widthOf(home2);
  check(homeLink === 1 && homeWidth.scroll <= 390, `the home page lists the league, linking to its page (${homeLink})`);
  await home2.close();
  for (const width of [390, 1200]) {
    const leagues = await open('/leagues', width);
    await leagues.waitForSelector('#page[data-ready]', { timeout: 10000 });
    const item = await leagues.locator(`#leagues li[data-league="${made.id}"]`).textContent().catch(() => '');
    const w = await widthOf(leagues);
    check(item.startsWith(leagueName) && item.includes(`${league.entrants.length} entrants`) && w.scroll <= width && (width < 500 || w.main >= 1100),
      `/leagues at ${width} px lists the league with its entrants ("${item}"), in the width it is given`);
    await leagues.screenshot({ path: path.join(shots, `leagues-${width}.png`), fullPage: true });
    await leagues.close();
  }
  const lobby3 = await open('/watch', 1200);
  check(await lobby3.locator('header a[href="/leagues"]').count() === 1, '/watch links the leagues beside the tournaments');
  await lobby3.close();
  const leaPage = await open('/players/lea', 390);
  await leaPage.waitForSelector('#page[data-ready]', { timeout: 10000 });
  const listed = await leaPage.locator(`#leagues a[href="/leagues/${made.id}"]`).textContent().catch(() => null);
  check(listed === leagueName, `a player's page lists the leagues it is in ("${listed}")`);
  await leaPage.screenshot({ path: path.join(shots, 'player-in-league-390.png'), fullPage: true });
  await leaPage.close();
  const noLeague = await open('/leagues/9b2d5c0e-4c83-4bb5-9a43-5f2a1f0e6a11', 390, { absent: true });
  await noLeague.waitForSelector('#page[data-ready]', { timeout: 10000 });
  check(/no such league/i.test(await noLeague.locator('#title').textContent()), 'an unknown league\'s page says there is none');
  await noLeague.close();

  const nowhere = await open('/tournaments/9b2d5c0e-4c83-4bb5-9a43-5f2a1f0e6a11', 390, { absent: true });
  await nowhere.waitForSelector('#page[data-ready]', { timeout: 10000 });
  check(/no such tournament/i.test(await nowhere.locator('#title').textContent()), 'an unknown tournament\'s page says there is none');
  await nowhere.close();

  check(!addresses.some((a) => a.includes(four.token) || a.includes(short.token) || a.includes(penalty.token)), `no request address carries a token (${addresses.length} requests)`);
  check(addresses.every((a) => a.startsWith(base)), 'every request goes to the server itself');
  check(problems.length === 0, `no script error or refused resource${problems.length ? `: ${problems.join('; ')}` : ''}`);
  await browser.close();
  if (failures) {
    console.error(`watch check: ${failures} failed`);
    process.exit(1);
  }
  console.log(`watch check: all passed; screenshots in ${shots}`);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
