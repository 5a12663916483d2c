// Everything the watch pages ask the server, through the public API. A token, when there
// is one, travels only in the Authorization header, never in an address.

async function answer(res) {
  const body = await res.json().catch(() => null);
  if (!res.ok) {
    const err = new Error(body?.detail ?? `${res.status} ${res.statusText}`);
    err.status = res.status;
    err.problem = body;
    throw err;
  }
  return body;
}

function headers(token, extra = {}) {
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

const gamePath = (id) => `/v1/games/${encodeURIComponent(id)}`;

/** The game as `token`'s seat sees it, or as a spectator without one. */
export async function readView(id, token) {
  return answer(await fetch(gamePath(id), { headers: headers(token), cache: 'no-store' }));
}

/**
 * The log's entries after index `after` (0: from the start), every page of them. Pages
 * are read with `?after=<index>&limit=<n>` and followed by `next` until it is null; a
 * server that pays no attention to paging answers everything at once, and the entries
 * already known are dropped here.
 */
export async function readLog(id, token, after = 0) {
  const entries = [];
  let start = [];
  let cursor = after;
  for (;;) {
    const url = `${gamePath(id)}/log?after=${cursor}&limit=1000`;
    const page = await answer(await fetch(url, { headers: headers(token), cache: 'no-store' }));
    if (cursor === 0) start = page.start ?? [];
    const fresh = (page.moves ?? []).filter((m) => m.index > cursor);
    entries.push(...fresh);
    const last = fresh.length ? fresh[fresh.length - 1].index : cursor;
    if (page.next == null || last === cursor) return { start, entries };
    cursor = page.next;
  }
}

/**
 * The finished game's export, whole. Should the export come in pages (a `next` to follow,
 * `moves` in each), they are read here and joined.
 */
export async function readExport(id) {
  let whole = null;
  let url = `${gamePath(id)}/export`;
  for (;;) {
    const page = await answer(await fetch(url, { cache: 'no-store' }));
    if (whole === null) whole = page;
    else whole.moves.push(...(page.moves ?? []));
    if (page.next == null) return whole;
    url = `${gamePath(id)}/export?after=${encodeURIComponent(page.next)}`;
  }
}

/** Makes a move as `token`'s seat; answers the seat's new view and what happened. */
export async function postMove(id, token, move) {
  return answer(
    await fetch(`${gamePath(id)}/moves`, {
      method: 'POST',
      headers: headers(token, { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() }),
      body: JSON.stringify(move),
    }),
  );
}

/**
 * Calls `onVersion(version)` for each new version of the game. The public stream (an
 * EventSource cannot send a token); the browser reconnects by itself, with Last-Event-ID.
 * Answers a function that stops it.
 */
export function followEvents(id, onVersion, onTrouble) {
  const source = new EventSource(`${gamePath(id)}/events`);
  source.addEventListener('version', (e) => {
    const data = JSON.parse(e.data);
    onVersion(data.version, data.status);
  });
  source.onerror = () => onTrouble?.(source.readyState);
  return () => source.close();
}

/** One page of open games, newest first. */
export async function listOpenGames(page = 1) {
  return answer(await fetch(`/v1/games?status=waiting&page=${page}&per_page=50`, { cache: 'no-store' }));
}

/** Games in play, latest started first. */
export async function listPlayingGames(page = 1, perPage = 50) {
  return answer(await fetch(`/v1/games?status=playing&page=${page}&per_page=${perPage}`, { cache: 'no-store' }));
}

/** The latest finished games, latest first. */
export async function listFinishedGames(page = 1, perPage = 50) {
  return answer(await fetch(`/v1/games?status=finished&page=${page}&per_page=${perPage}`, { cache: 'no-store' }));
}

/** A page of the tournaments in one status (registering, running, finished), newest first. */
export async function listTournaments(status, page = 1, perPage = 20) {
  const path = `/v1/tournaments?status=${encodeURIComponent(status)}&page=${page}&per_page=${perPage}`;
  return answer(await fetch(path, { cache: 'no-store' }));
}

/** A player's public profile, by id or name. */
export async function readProfile(who) {
  return answer(await fetch(`/v1/players/${encodeURIComponent(who)}`, { cache: 'no-store' }));
}

/** A player's rating after each of its latest rated games in a preset, oldest first. */
export async function readRatingHistory(who, preset) {
  const path = `/v1/players/${encodeURIComponent(who)}/ratings/${encodeURIComponent(preset)}/history`;
  return answer(await fetch(path, { cache: 'no-store' }));
}

/** A page of a player's games, newest first. */
export async function readPlayerGames(who, page = 1, perPage = 20) {
  const path = `/v1/players/${encodeURIComponent(who)}/games?page=${page}&per_page=${perPage}`;
  return answer(await fetch(path, { cache: 'no-store' }));
}

/** A page of a player's matches, newest first. */
export async function readPlayerMatches(who, page = 1, perPage = 10) {
  const path = `/v1/players/${encodeURIComponent(who)}/matches?page=${page}&per_page=${perPage}`;
  return answer(await fetch(path, { cache: 'no-store' }));
}

/** A page of the tournaments a player (or level) entered, newest first. */
export async function readPlayerTournaments(who, page = 1, perPage = 10) {
  const path = `/v1/players/${encodeURIComponent(who)}/tournaments?page=${page}&per_page=${perPage}`;
  return answer(await fetch(path, { cache: 'no-store' }));
}

/** A page of a preset's leaderboard. */
export async function readLeaderboard(preset, page = 1, perPage = 50) {
  const path = `/v1/leaderboard/${encodeURIComponent(preset)}?page=${page}&per_page=${perPage}`;
  return answer(await fetch(path, { cache: 'no-store' }));
}

/** Every preset. */
export async function listPresets() {
  return answer(await fetch('/v1/presets', { cache: 'no-store' }));
}

const tournamentPath = (id) => `/v1/tournaments/${encodeURIComponent(id)}`;

/** A tournament: its settings, standings, pairings and byes. */
export async function readTournament(id) {
  return answer(await fetch(tournamentPath(id), { cache: 'no-store' }));
}

/**
 * The tournament `t` with a stream event that says only what changed applied to it: its
 * status, round and waiting; its pairings new or decided (known by their games); its
 * byes; the players whose line changed, then every player ranked again in the standings'
 * order (score, Buchholz, Sonneborn-Berger, margin, then entry).
 */
export function applyTournamentEvent(t, event) {
  if (event.tournament) return event.tournament;
  const next = { ...t, status: event.status, round: event.round, waiting: event.waiting };
  const pairings = [...t.pairings];
  for (const p of event.pairings ?? []) {
    const at = pairings.findIndex((q) => q.games[0] === p.games[0]);
    if (at >= 0) pairings[at] = p;
    else pairings.push(p);
  }
  next.pairings = pairings;
  next.byes = [...t.byes, ...(event.byes ?? [])];
  const players = new Map(t.players.map((p) => [p.id, p]));
  for (const p of event.players ?? []) players.set(p.id, p);
  next.players = [...players.values()].sort(
    (a, b) =>
      b.score - a.score ||
      b.buchholz - a.buchholz ||
      b.sonneborn_berger - a.sonneborn_berger ||
      b.margin - a.margin ||
      a.entry - b.entry,
  );
  next.players = next.players.map((p, i) => ({ ...p, rank: i + 1 }));
  return next;
}

/**
 * Calls `onTournament(tournament, type)` for each event of the tournament's stream, with
 * the tournament as it now stands (the first event carries the whole of it; the others
 * what changed, applied here), until `tournament_finished`, after which the stream is
 * closed (else the browser would reconnect to a stream that has nothing more to say).
 * Answers a function that stops it.
 */
export function followTournament(id, onTournament, onConnection) {
  const source = new EventSource(`${tournamentPath(id)}/events`);
  let latest = null;
  for (const type of ['standings', 'round_started', 'pairing_finished', 'tournament_finished']) {
    source.addEventListener(type, (e) => {
      if (type === 'tournament_finished') source.close();
      const event = JSON.parse(e.data);
      // A (re)connection starts with the whole tournament; nothing applies before it.
      if (!event.tournament && !latest) return;
      latest = applyTournamentEvent(latest, event);
      onTournament(latest, type);
    });
  }
  source.onopen = () => onConnection?.(true);
  source.onerror = () => onConnection?.(source.readyState === EventSource.CLOSED ? null : false);
  return () => source.close();
}

const leaguePath = (id) => `/v1/leagues/${encodeURIComponent(id)}`;

/** A page of leagues, newest first. */
export async function listLeagues(page = 1, perPage = 20) {
  return answer(await fetch(`/v1/leagues?page=${page}&per_page=${perPage}`, { cache: 'no-store' }));
}

/** A league: its settings, its table in rank order, its matches in play, the latest counted. */
export async function readLeague(id) {
  return answer(await fetch(leaguePath(id), { cache: 'no-store' }));
}

/** A match: its players, its games (each a table to watch), its score and margin. */
export async function readMatch(id) {
  return answer(await fetch(`/v1/matches/${encodeURIComponent(id)}`, { cache: 'no-store' }));
}

/**
 * Calls `onChange(type, data)` for each event of the league's stream (`standings` first,
 * the league as it stands, then `match_started`, `match_finished`, and `standings` again
 * after each count; `league` is taken as the whole league too), and `onConnection(up)` as it
 * opens (true), drops and retries (false) or gives up for good (null: a server without
 * the stream answers 404, which the browser never retries). Answers a function that
 * stops it.
 */
export function followLeague(id, onChange, onConnection) {
  const source = new EventSource(`${leaguePath(id)}/events`);
  for (const type of ['league', 'match_started', 'match_finished', 'standings']) {
    source.addEventListener(type, (e) => {
      let data = null;
      try {
        data = JSON.parse(e.data);
      } catch {
        // The page reads the league again whatever the event carried.
      }
      onChange(type, data);
    });
  }
  source.onopen = () => onConnection?.(true);
  source.onerror = () => onConnection?.(source.readyState === EventSource.CLOSED ? null : false);
  return () => source.close();
}
