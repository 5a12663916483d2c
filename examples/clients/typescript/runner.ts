// A bot-account runner on types generated from the server's OpenAPI document (schema.d.ts;
// see ../README.md, "The runners").
//
// Fill in `choose()` below: given your seat's view, return one entry of `view.legal_moves`.
// Everything else is done here, the lichess-bot way (docs/bots.md, section 10):
// - the player: --key (or DOMINO_KEY), else a new bot account whose key is printed once;
// - its stream, GET /v1/players/me/events: every game it is given (`game_started`, and on
//   every (re)connect or `resync` the list of GET /v1/players/me/games?status=playing) is
//   played in a task of its own, long-polling the view until `legal_moves` is not empty;
// - every `challenge` (and on (re)connecting, every open one GET /v1/challenges?direction=in
//   lists) is accepted: a default, change `onChallenge()` to be choosier;
// - `match`: a duplicate match against a built-in level (POST /v1/matches), its margin
//   printed each time one of its games ends, until it is finished; `--seed TEXT` makes its
//   deals from TEXT, so two versions of a bot can be measured on the same deals;
// - `challenge NAME`: a game against a player or a built-in level (POST /v1/challenges),
//   played once accepted, until it is finished;
// - `--seek PRESET`: a game with whoever seeks the same (POST /v1/seeks), or with a
//   built-in level when nobody came within --fallback-after seconds (--fallback LEVEL);
//   the game comes on the stream (`game_started`), the seek is read again meanwhile, and
//   the runner exits once the game is finished (Ctrl-C while it waits cancels the seek);
// - `tournament join ID` (or `--tournament ID`): enters the tournament with the player's
//   key and plays every game it gives (`tournament_round` names them, `game_started` too),
//   the standings printed as they change, until it is over (`tournament_finished`);
//   `tournament create`: makes one (with built-in levels as entrants, say), enters it,
//   starts it with `--start`, and plays it the same way;
// - `league ID` (or `--league ID`): enters the league with the player's key (`409
//   already_entered`: it is in already, fine) and keeps its stream open, which is what
//   makes a pulling bot available to the league: the league pairs it whenever it has a
//   free place, and every game it is given is played, its line of the table printed as it
//   changes, until stopped (Ctrl-C: it is paired no more once its stream is closed;
//   `--matches N` exits after N more of its matches are counted).
//
// Every call answered `429 rate_limited` or `503` with `Retry-After` is sent again after
// that many seconds and up to as many again at random (at most 8 times; a line says so),
// as docs/bots.md asks. A read, or a move with its Idempotency-Key, that gets no answer at
// all (its connection closed under it) is sent again too, after a second.
//
// Usage:
//   node dist/runner.js URL [--key KEY] [--name NAME]          # play whatever comes, forever
//   node dist/runner.js URL match --opponent greedy --preset block --deals 10 --parallel 2 \
//       [--seed TEXT] [--rules '{"target": null, "rounds": 1}'] [--rated]  # exits when it ends
//   node dist/runner.js URL challenge NAME --preset block [--rated]  # one game; exits when it ends
//   node dist/runner.js URL tournament create --title TITLE --preset block --format round_robin \
//       [--levels random,greedy] [--start]                  # make, enter, play; exits when over
//   node dist/runner.js URL tournament join ID              # enter it, play it; exits when over
//   node dist/runner.js URL --seek all_fives [--fallback greedy --fallback-after 15] \
//       [--seats 2] [--clock '{"bank_secs": 120}'] [--rated]  # one game; exits when it ends
//   node dist/runner.js URL --tournament ID [--key KEY]        # enter it, play it; exits when it ends
//   node dist/runner.js URL league ID [--matches N]            # enter it, play until stopped
//   node dist/runner.js URL --league ID [--key KEY]            # the same
// Exits non-zero on any answer it did not expect.
import createClient from "openapi-fetch";
import { randomUUID, randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
type Move = Schemas["Move"];
type View = Schemas["GameView"] | Schemas["MoveResult"]; // a move's answer: the new view plus its events
type Challenge = Schemas["ChallengeView"];
type PlayerEvent = Schemas["PlayerEvent"];
type MatchView = Schemas["MatchView"];
type TournamentView = Schemas["TournamentView"];
type LeagueView = Schemas["LeagueView"];
type Preset = Schemas["CreateMatch"]["preset"];
type Level = Schemas["BotLevel"];
const presets: readonly Preset[] = ["classic", "block", "draw", "all_fives", "muggins", "penalty"];
const levels: readonly Level[] = ["random", "greedy", "expert", "master"];

// ---- the one function to fill in ------------------------------------------------------

// Resign is never listed; every other variant says what it credits.
const pointsOf = (move: Move): number => (move.type === "resign" ? 0 : (move.points ?? 0));

// Your bot: given your seat's view (hand, layout, scores, `legal_moves`, never empty here),
// return the move to make, one entry of `view.legal_moves` as it is. The default: the most
// points, first of equals (under muggins the claiming form of a scoring play comes first).
function choose(view: View): Move {
  let best = view.legal_moves[0]!;
  for (const move of view.legal_moves) if (pointsOf(move) > pointsOf(best)) best = move;
  return best;
}

// Whether to accept a challenge (a default: every one).
function onChallenge(_challenge: Challenge): boolean {
  return true;
}

// ---- the runner -----------------------------------------------------------------------

// ---- calls sent again when the server asks to wait ----
const RETRIES = 8; // sends of one call after its first, each after the Retry-After asked
const LONGEST_WAIT = 60; // seconds: a Retry-After above it is cut to it
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// 429 (a rate limit) and 503 (the store did not answer) with Retry-After, and no answer at
// all: docs/bots.md's table. A move carries its Idempotency-Key, so sending it again cannot
// play it twice; a call that is neither a read nor keyed is never sent twice.
async function retrying(request: Request): Promise<Response> {
  const safe = request.method === "GET" || request.headers.has("idempotency-key");
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(request.clone());
    } catch (error) {
      // fetch rejects with a TypeError when the connection fails (a closed socket, a reset).
      if (!safe || attempt === RETRIES || !(error instanceof TypeError)) throw error;
      console.log(
        `retry: ${request.method} ${new URL(request.url).pathname} got no answer (${String(error.cause ?? error)}); ` +
          `again in 1 s (${attempt + 1} of ${RETRIES})`,
      );
      await sleep(1000);
      continue;
    }
    const wait = response.headers.get("retry-after");
    if ((response.status !== 429 && response.status !== 503) || wait === null || attempt === RETRIES) return response;
    const problem = (await response.json().catch(() => null)) as { detail?: string } | null;
    const asked = Math.min(/^\d+$/.test(wait) ? Number(wait) : 1, LONGEST_WAIT);
    // Up to as long again, at random: the runner's games, refused together, would otherwise
    // all come back in the same instant and lose to each other again.
    const secs = Math.round(asked * (1 + Math.random()) * 100) / 100;
    console.log(
      `retry: ${request.method} ${new URL(request.url).pathname} answered ${response.status} ` +
        `(${problem?.detail ?? ""}); again in ${secs} s (${attempt + 1} of ${RETRIES})`,
    );
    await sleep(secs * 1000);
  }
}

function fail(what: string, status?: number, error?: unknown): never {
  console.error(`FAILED: ${what}${status === undefined ? "" : `: unexpected answer ${status}: ${JSON.stringify(error)}`}`);
  process.exit(1);
}

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    key: { type: "string" },
    name: { type: "string" },
    opponent: { type: "string", default: "greedy" },
    preset: { type: "string", default: "block" },
    deals: { type: "string", default: "10" },
    parallel: { type: "string", default: "2" },
    rules: { type: "string" },
    rated: { type: "boolean", default: false },
    seed: { type: "string" },
    title: { type: "string" },
    format: { type: "string", default: "swiss" },
    levels: { type: "string" },
    rounds: { type: "string" },
    start: { type: "boolean", default: false },
    seek: { type: "string" },
    fallback: { type: "string" },
    "fallback-after": { type: "string", default: "15" },
    seats: { type: "string" },
    clock: { type: "string" },
    tournament: { type: "string" },
    league: { type: "string" },
    matches: { type: "string", default: "0" },
  },
});
const [server, command, arg, id] = positionals;
const modes = [command !== undefined, opts.seek !== undefined, opts.tournament !== undefined, opts.league !== undefined].filter(Boolean).length;
const known =
  command === undefined ||
  (command === "match" && arg === undefined) ||
  (command === "challenge" && arg !== undefined) ||
  (command === "league" && arg !== undefined && id === undefined) ||
  (command === "tournament" && ((arg === "create" && opts.title !== undefined) || (arg === "join" && id !== undefined)));
if (server === undefined || !known || modes > 1) {
  console.error(
    "usage: runner.js URL [--key KEY] [--name NAME]\n" +
      `       runner.js URL match [--key KEY] --opponent LEVEL|NAME --preset block --deals 10 --parallel 2 [--seed TEXT] [--rules JSON] [--rated]\n` +
      `       runner.js URL challenge NAME [--key KEY] --preset block [--rules JSON] [--rated]\n` +
      "       runner.js URL tournament create --title TITLE [--key KEY] --preset block --format swiss|round_robin [--levels L1,L2] [--rounds N] [--rules JSON] [--start]\n" +
      "       runner.js URL tournament join ID [--key KEY]\n" +
      "       runner.js URL --seek PRESET [--key KEY] [--fallback LEVEL --fallback-after SECS] [--seats N] [--clock JSON] [--rated]\n" +
      "       runner.js URL --tournament ID [--key KEY]\n" +
      "       runner.js URL league ID [--key KEY] [--matches N]\n" +
      "       runner.js URL --league ID [--key KEY] [--matches N]\n" +
      `LEVEL: a built-in level, one of ${levels.join(", ")}`,
  );
  process.exit(2);
}

let key = opts.key ?? process.env["DOMINO_KEY"];
if (key === undefined || key === "") {
  const name = opts.name ?? `ts-runner-${randomBytes(4).toString("hex")}`;
  const made = await createClient<paths>({ baseUrl: server, fetch: retrying }).POST("/v1/players", { body: { name, bot: true } });
  if (made.data === undefined || made.response.status !== 201) fail("create player", made.response.status, made.error);
  key = made.data.key;
  console.log(`bot account ${made.data.player.name} created; its key, shown once (keep it, then run with --key or DOMINO_KEY):\n${key}`);
}
const authorization = `Bearer ${key}`;
const api = createClient<paths>({ baseUrl: server, headers: { Authorization: authorization }, fetch: retrying });
const me = await api.GET("/v1/players/me");
if (me.data === undefined || me.response.status !== 200) fail("me", me.response.status, me.error);
console.log(`playing as ${me.data.name}`);

// ---- one game ----
const started = new Set<string>(); // never twice: the list and the events overlap
const finished = new Set<string>();
const waiting: Array<() => void> = []; // who waits for the next game to start or end

function news(): void {
  for (const wake of waiting.splice(0)) wake();
}

// Until a game starts or ends, or `ms` passed anyway.
function nextNews(ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    waiting.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function startGame(id: string): void {
  if (started.has(id)) return;
  started.add(id);
  play(id).catch((error: unknown) => fail(`game ${id}: ${String(error)}`));
  news();
}

async function play(id: string): Promise<void> {
  // A tournament names a round's games before it makes them (and makes one its admission
  // refused at its next poll): not found yet, wait.
  const deadline = Date.now() + 300_000;
  let first = await api.GET("/v1/games/{id}", { params: { path: { id } } });
  while (first.response.status === 404 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    first = await api.GET("/v1/games/{id}", { params: { path: { id } } });
  }
  if (first.data === undefined || first.response.status !== 200) fail(`game ${id}`, first.response.status, first.error);
  let view: View = first.data;
  console.log(`game ${id} (${view.preset}): playing seat ${view.you}`);
  let moves = 0;
  while (view.status !== "finished") {
    if (view.legal_moves.length === 0) {
      // Not ours to move: wait (long poll) until the game changes.
      const after: number = view.version;
      const next = await api.GET("/v1/games/{id}", { params: { path: { id }, query: { after, wait: 30 } } });
      if (next.data === undefined || next.response.status !== 200) fail(`game ${id}`, next.response.status, next.error);
      view = next.data;
      continue;
    }
    const move = choose(view);
    const answer = await api.POST("/v1/games/{id}/moves", {
      params: { path: { id }, header: { "Idempotency-Key": randomUUID() } },
      body: move,
    });
    if (answer.data === undefined || answer.response.status !== 200)
      fail(`game ${id}: move ${JSON.stringify(move)}`, answer.response.status, answer.error);
    view = answer.data;
    moves += 1;
  }
  console.log(
    `game ${id} finished: scores ${JSON.stringify(view.scores)}, winner ${view.result?.winner ?? "none"}, ` +
      `we were seat ${view.you} and made ${moves} moves`,
  );
  finished.add(id);
  news();
}

// ---- the player's stream ----
async function catchUp(): Promise<void> {
  for (let page = 1; ; page++) {
    const list = await api.GET("/v1/players/me/games", { params: { query: { status: "playing", page, per_page: 100 } } });
    if (list.data === undefined || list.response.status !== 200) fail("my games", list.response.status, list.error);
    for (const game of list.data.games) startGame(game.game_id);
    if (list.data.games.length < list.data.per_page) break;
  }
  const open = await api.GET("/v1/challenges", { params: { query: { direction: "in" } } });
  if (open.data === undefined || open.response.status !== 200) fail("my challenges", open.response.status, open.error);
  for (const challenge of open.data.challenges) await answer(challenge); // open ones, received
}

async function answer(challenge: Challenge): Promise<void> {
  // Not accepted: it expires unanswered (or decline it: POST /v1/challenges/{id}/decline).
  if (!onChallenge(challenge)) return;
  const { id } = challenge;
  const accepted = await api.POST("/v1/challenges/{id}/accept", { params: { path: { id } } });
  if (accepted.response.status === 409) {
    console.log(`challenge ${id}: already closed`); // canceled or expired meanwhile
    return;
  }
  if (accepted.data === undefined || accepted.response.status !== 200)
    fail(`accept challenge ${id}`, accepted.response.status, accepted.error);
  console.log(`challenge ${id} from ${challenge.challenger.name} (${challenge.preset}): accepted, ${accepted.data.status}`);
}

async function handle(name: string, data: string): Promise<void> {
  if (name === "resync") return catchUp();
  if (data === "") return;
  const event = JSON.parse(data) as PlayerEvent; // the stream's `data` is a PlayerEvent
  if (event.type === "game_started") {
    startGame(event.game_id);
  } else if (event.type === "challenge") {
    await answer(event);
  } else if (event.type === "tournament_round") {
    for (const game of event.game_ids) startGame(game);
    if (event.game_ids.length === 0) console.log(`tournament ${event.tournament_id} round ${event.round}: we have the bye`);
    news();
  } else if (event.type === "tournament_finished") {
    news();
  }
  // game_finished: the game's own task sees it end; the rest needs nothing here.
}

// Connects, lists what is in play (nothing is replayed), then handles every event until
// the stream closes.
async function listenOnce(onConnected: () => void): Promise<void> {
  const response = await retrying(
    new Request(`${server!.replace(/\/$/, "")}/v1/players/me/events`, {
      headers: { Authorization: authorization, Accept: "text/event-stream" },
    }),
  );
  if (response.status !== 200 || response.body === null) fail("events", response.status, await response.text());
  await catchUp();
  onConnected();
  const decoder = new TextDecoder();
  let buffer = "";
  let name = "message";
  let data: string[] = [];
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, "");
      buffer = buffer.slice(end + 1);
      if (line === "") {
        if (data.length > 0) await handle(name, data.join("\n"));
        name = "message";
        data = [];
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      }
    }
  }
}

// The stream, for ever: (re)connect with a growing pause after a failure.
async function listen(onConnected: () => void): Promise<never> {
  let delay = 1000;
  for (;;) {
    try {
      await listenOnce(() => {
        delay = 1000;
        onConnected();
      });
      console.log("events: the stream closed; reconnecting");
    } catch (error) {
      console.log(`events: ${String(error)}; reconnecting in ${delay / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
}

// ---- a match ----
const signed = (x: number): string => `${x >= 0 ? "+" : ""}${x.toFixed(2)}`;

function marginLine(match: MatchView): string {
  const { score: s, margin: m } = match;
  const ci = m.ci95 ? `[${m.ci95.map(signed).join(", ")}]` : "n/a (fewer than 2 deals)";
  return (
    `match ${match.id} ${match.status}: ${m.deals_done}/${match.deals} deals, ` +
    `score ${s.wins}-${s.losses}-${s.draws} (w-l-d), points ${s.points_for}-${s.points_against}; ` +
    `margin ${signed(m.per_deal_mean)} a deal, 95% CI ${ci}`
  );
}

async function runMatch(): Promise<void> {
  const preset = presets.find((p) => p === opts.preset);
  if (preset === undefined) fail(`unknown preset ${opts.preset}`);
  const rules = opts.rules === undefined ? null : (JSON.parse(opts.rules) as Schemas["RulesOverrides"]);
  const body: Schemas["CreateMatch"] = {
    opponent: opts.opponent,
    preset,
    deals: Number(opts.deals),
    parallel: Number(opts.parallel),
    rated: opts.rated,
    rules,
    seed: opts.seed ?? null,
  };
  const made = await api.POST("/v1/matches", { body });
  if (made.data === undefined || made.response.status !== 201) fail("create match", made.response.status, made.error);
  const id = made.data.id;
  const seeded = opts.seed === undefined ? "" : `, deals from seed ${JSON.stringify(opts.seed)}`;
  console.log(`match ${id}: ${body.deals} deals of ${preset} against ${body.opponent}, ${body.parallel} at a time${seeded}`);
  let last = "";
  for (;;) {
    // A game started or ended (its task says so), or look again in a while anyway.
    await nextNews(5000);
    const read = await api.GET("/v1/matches/{id}", { params: { path: { id } } });
    if (read.data === undefined || read.response.status !== 200) fail("match", read.response.status, read.error);
    const match = read.data;
    for (const game of match.games) if (game.status === "playing") startGame(game.game_id); // the stream announces them; this only makes sure
    const line = marginLine(match);
    if (line !== last) console.log(line);
    last = line;
    if (match.status === "finished") {
      const games = [...match.games].sort((a, b) => a.deal - b.deal || a.game_id.localeCompare(b.game_id));
      for (const game of games) console.log(`match ${id} deal ${game.deal}: game ${game.game_id}`);
      return;
    }
    if (match.status !== "waiting" && match.status !== "running") fail(`match ${id} is ${match.status}`);
  }
}

// ---- a seek ----
async function runSeek(presetName: string): Promise<void> {
  const preset = presets.find((p) => p === presetName);
  if (preset === undefined) fail(`unknown preset ${presetName}`);
  let fallback: Schemas["FallbackBody"] | null = null;
  if (opts.fallback !== undefined) {
    const level = levels.find((l) => l === opts.fallback);
    if (level === undefined) fail(`unknown level ${opts.fallback} (one of ${levels.join(", ")})`);
    fallback = { level, after_secs: Number(opts["fallback-after"]) };
  }
  const body: Schemas["CreateSeek"] = {
    preset,
    rated: opts.rated,
    seats: opts.seats === undefined ? null : Number(opts.seats),
    clock: opts.clock === undefined ? null : (JSON.parse(opts.clock) as Schemas["ClockBody"]),
    fallback,
  };
  const made = await api.POST("/v1/seeks", { body });
  if (made.data === undefined || made.response.status !== 201) fail("seek", made.response.status, made.error);
  let seek = made.data;
  const { id } = seek;
  const instead = fallback === null ? "" : `, else ${fallback.level} after ${fallback.after_secs} s`;
  console.log(`seek ${id}: ${preset}, ${seek.seats} seats${seek.rated ? ", rated" : ""}${instead}: ${seek.status}`);
  // A seek left waiting would match a game nobody plays: Ctrl-C takes it back.
  const cancel = (): void => {
    api.DELETE("/v1/seeks/{id}", { params: { path: { id } } }).finally(() => process.exit(130));
  };
  process.once("SIGINT", cancel);
  // The game comes on the stream; the seek is read again each time a game starts, and
  // every second anyway (its status says when it was matched, or expired).
  while (seek.status === "waiting") {
    await nextNews(1000);
    const read = await api.GET("/v1/seeks/{id}", { params: { path: { id } } });
    if (read.data === undefined || read.response.status !== 200) fail(`seek ${id}`, read.response.status, read.error);
    seek = read.data;
  }
  process.off("SIGINT", cancel);
  const gameId = seek.game_id;
  if (seek.status !== "matched" || gameId === null || gameId === undefined)
    fail(`seek ${id} is ${seek.status}${seek.status === "expired" ? ": nobody came (seek again, or with --fallback)" : ""}`);
  console.log(`seek ${id}: matched, game ${gameId} (watch it at ${server!.replace(/\/$/, "")}/watch/${gameId})`);
  startGame(gameId); // the stream announces it; this only makes sure
  while (!finished.has(gameId)) await nextNews(5000);
}

// ---- a challenge ----
async function runChallenge(opponent: string): Promise<void> {
  const preset = presets.find((p) => p === opts.preset);
  if (preset === undefined) fail(`unknown preset ${opts.preset}`);
  const rules = opts.rules === undefined ? null : (JSON.parse(opts.rules) as Schemas["RulesOverrides"]);
  const made = await api.POST("/v1/challenges", { body: { opponents: [opponent], preset, rated: opts.rated, rules } });
  if (made.data === undefined || made.response.status !== 201) fail("challenge", made.response.status, made.error);
  let challenge = made.data;
  const { id } = challenge;
  console.log(`challenge ${id}: ${preset} against ${opponent}: ${challenge.status}`);
  const cancel = (): void => {
    api.DELETE("/v1/challenges/{id}", { params: { path: { id } } }).finally(() => process.exit(130));
  };
  process.once("SIGINT", cancel);
  // A built-in level accepts at once; a player when it answers (or it expires).
  while (challenge.status === "open") {
    await nextNews(1000);
    const read = await api.GET("/v1/challenges/{id}", { params: { path: { id } } });
    if (read.data === undefined || read.response.status !== 200) fail(`challenge ${id}`, read.response.status, read.error);
    challenge = read.data;
  }
  process.off("SIGINT", cancel);
  const gameId = challenge.game_id;
  if (challenge.status !== "accepted" || gameId === null || gameId === undefined) fail(`challenge ${id} is ${challenge.status}`);
  console.log(`challenge ${id}: accepted, game ${gameId} (watch it at ${server!.replace(/\/$/, "")}/watch/${gameId})`);
  startGame(gameId);
  while (!finished.has(gameId)) await nextNews(5000);
}

// ---- a tournament ----
async function newTournament(name: string): Promise<string> {
  const preset = presets.find((p) => p === opts.preset);
  if (preset === undefined) fail(`unknown preset ${opts.preset}`);
  const wanted = opts.levels === undefined ? [] : opts.levels.split(",");
  const entered = wanted.map((l) => levels.find((known) => known === l) ?? fail(`unknown level ${l} (one of ${levels.join(", ")})`));
  const body: Schemas["CreateTournament"] = {
    name,
    preset,
    format: opts.format,
    levels: entered.length > 0 ? entered : null,
    rounds: opts.rounds === undefined ? null : Number(opts.rounds),
    rules: opts.rules === undefined ? null : (JSON.parse(opts.rules) as Schemas["RulesOverrides"]),
  };
  const made = await api.POST("/v1/tournaments", { body });
  if (made.data === undefined || made.response.status !== 201) fail("create tournament", made.response.status, made.error);
  console.log(`tournament ${made.data.id} (${made.data.name}) made`);
  return made.data.id;
}

function standingsLine(t: TournamentView, myId: string): string {
  const table = t.players
    .map((p) => `${p.rank}. ${p.name}${p.id === myId ? " (us)" : ""} ${p.score}${p.withdrawn ? " withdrawn" : ""}`)
    .join(", ");
  return `tournament ${t.id} ${t.status}, round ${t.round} of ${t.rounds}: ${table}`;
}

async function runTournament(id: string, myId: string, start: boolean): Promise<void> {
  // `{}` enters the key's player.
  const joined = await api.POST("/v1/tournaments/{id}/players", { params: { path: { id } }, body: {} });
  let t: TournamentView;
  if (joined.response.status === 409) {
    // Entered already (a runner started again?): play on.
    const read = await api.GET("/v1/tournaments/{id}", { params: { path: { id } } });
    if (read.data === undefined || read.response.status !== 200) fail(`tournament ${id}`, read.response.status, read.error);
    if (!read.data.players.some((p) => p.id === myId)) fail(`join tournament ${id}`, 409, joined.error);
    t = read.data;
  } else {
    if (joined.data === undefined || joined.response.status !== 200) fail(`join tournament ${id}`, joined.response.status, joined.error);
    t = joined.data;
  }
  console.log(`tournament ${t.id} (${t.name}): ${t.format} of ${t.preset}, ${t.status}; watch it at ${server!.replace(/\/$/, "")}/tournaments/${t.id}`);
  if (start) {
    const started = await api.POST("/v1/tournaments/{id}/start", { params: { path: { id } } });
    if (started.data === undefined || started.response.status !== 200) fail(`start tournament ${id}`, started.response.status, started.error);
  }
  let last = "";
  for (;;) {
    // A round started, a game ended or it is over (the stream says so), or look again anyway.
    await nextNews(2000);
    const read = await api.GET("/v1/tournaments/{id}", { params: { path: { id } } });
    if (read.data === undefined || read.response.status !== 200) fail(`tournament ${id}`, read.response.status, read.error);
    t = read.data;
    if (t.status === "finished") {
      // Over: each game's task has seen its end, or is about to; the table last.
      const deadline = Date.now() + 10_000;
      while ([...started].some((g) => !finished.has(g)) && Date.now() < deadline) await nextNews(100);
      console.log(standingsLine(t, myId));
      return;
    }
    const line = standingsLine(t, myId);
    if (line !== last) console.log(line);
    last = line;
    if (t.status !== "registering" && t.status !== "running") fail(`tournament ${id} is ${t.status}: ${t.reason ?? ""}`);
  }
}

// ---- a league ----
function leagueLine(l: LeagueView, myId: string): string {
  const mine = l.entrants.find((e) => e.id === myId);
  if (mine === undefined) return `league ${l.id} (${l.name}): we are not in it`;
  const oneDecimal = (x: number): string => `${x < 0 ? "-" : "+"}${Math.abs(x).toFixed(1)}`;
  const ci = mine.margin_ci95 ? ` (95% ${oneDecimal(mine.margin_ci95[0]!)} to ${oneDecimal(mine.margin_ci95[1]!)})` : "";
  return (
    `league ${l.id}: ${mine.rank}. of ${l.entrants.length}, rating ${mine.rating} ± ${mine.deviation}, ` +
    `${mine.matches} ${mine.matches === 1 ? "match" : "matches"} (won ${mine.wins}, drawn ${mine.draws}, lost ${mine.losses}), ` +
    `margin ${oneDecimal(mine.margin_per_deal)} a deal${ci}; ${mine.available ? "available" : "away"}`
  );
}

async function runLeague(id: string, myId: string, stopAfter: number): Promise<void> {
  const entered = await api.POST("/v1/leagues/{id}/entrants", { params: { path: { id } } });
  let l: LeagueView;
  if (entered.response.status === 409) {
    // In it already (a runner started again?): play on. Full, or a cap: nothing to play.
    if ((entered.error as { code?: string } | undefined)?.code !== "already_entered") fail(`enter league ${id}`, 409, entered.error);
    const read = await api.GET("/v1/leagues/{id}", { params: { path: { id } } });
    if (read.data === undefined || read.response.status !== 200) fail(`league ${id}`, read.response.status, read.error);
    l = read.data;
  } else {
    if (entered.data === undefined || entered.response.status !== 200) fail(`enter league ${id}`, entered.response.status, entered.error);
    l = entered.data;
  }
  console.log(
    `league ${l.id} (${l.name}): ${l.preset}, ${l.deals_per_match} ${l.deals_per_match === 1 ? "deal" : "deals"} a match; ` +
      `watch it at ${server!.replace(/\/$/, "")}/leagues/${l.id}`,
  );
  // The open stream (listen) is what makes us available: the league pairs us as it
  // drives, and each game comes as game_started. Here only the table is read now and
  // then, after a game starts or ends, or every 10 s.
  const first = l.entrants.find((e) => e.id === myId)?.matches ?? 0;
  let last = "";
  for (;;) {
    await nextNews(10_000);
    const read = await api.GET("/v1/leagues/{id}", { params: { path: { id } } });
    if (read.data === undefined || read.response.status !== 200) fail(`league ${id}`, read.response.status, read.error);
    l = read.data;
    const line = leagueLine(l, myId);
    if (line !== last) console.log(line);
    last = line;
    const played = (l.entrants.find((e) => e.id === myId)?.matches ?? first) - first;
    if (stopAfter > 0 && played >= stopAfter) {
      console.log(`league ${l.id}: ${played} of our matches counted; stopping (our stream closes: we are paired no more)`);
      return;
    }
  }
}

const connected = new Promise<void>((resolve) => {
  listen(resolve).catch((error: unknown) => fail(`events: ${String(error)}`));
});
const leagueId = command === "league" ? arg : opts.league;
if (leagueId !== undefined) {
  // The stream first: it is what makes us available, and game_started is not replayed.
  const timeout = setTimeout(() => fail("events: not connected after 30 s"), 30_000);
  await connected;
  clearTimeout(timeout);
  const stopAfter = Number(opts.matches);
  if (!Number.isInteger(stopAfter) || stopAfter < 0) fail(`--matches ${opts.matches}: a whole number, 0 for no end`);
  await runLeague(leagueId, me.data.id, stopAfter);
  process.exit(0);
}
if (command === "match" || command === "challenge" || command === "tournament") {
  // The stream first: game_started is not replayed.
  const timeout = setTimeout(() => fail("events: not connected after 30 s"), 30_000);
  await connected;
  clearTimeout(timeout);
  if (command === "match") await runMatch();
  else if (command === "challenge") await runChallenge(arg!);
  else if (arg === "create") await runTournament(await newTournament(opts.title!), me.data.id, opts.start);
  else await runTournament(id!, me.data.id, false);
  process.exit(0);
}
if (opts.seek !== undefined) {
  // The stream first, as for a match: a seek may be matched as soon as it is made.
  const timeout = setTimeout(() => fail("events: not connected after 30 s"), 30_000);
  await connected;
  clearTimeout(timeout);
  await runSeek(opts.seek);
  process.exit(0);
}
if (opts.tournament !== undefined) {
  // The stream first, as for a match: the first round may start as soon as it is joined.
  const timeout = setTimeout(() => fail("events: not connected after 30 s"), 30_000);
  await connected;
  clearTimeout(timeout);
  await runTournament(opts.tournament, me.data.id, false);
  process.exit(0);
}
