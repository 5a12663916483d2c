// A domino bot on types generated from the server's OpenAPI document (schema.d.ts, made by
// `npm run generate`). It creates a game against a built-in `greedy` bot, takes the other
// seat and plays to the end: each time it may move, it posts the legal move with the most
// `points` exactly as the server listed it. Under muggins rules the claiming form of a
// scoring play comes first and the unclaimed form has `points: 0`, so this claims.
//
// Usage: node dist/bot.js <server URL> [preset]    (preset: muggins, all_fives, ...)
// Exits non-zero on any answer it did not expect.
import createClient from "openapi-fetch";
import { randomUUID } from "node:crypto";
import type { components, paths } from "./schema.js";

type Move = components["schemas"]["Move"];
type GameView = components["schemas"]["GameView"];
type Preset = components["schemas"]["CreateGame"]["preset"];

const presets: readonly Preset[] = ["classic", "block", "draw", "all_fives", "muggins", "penalty"];
const [server, presetArg = "muggins"] = process.argv.slice(2);
const preset = presets.find((p) => p === presetArg);
if (server === undefined || preset === undefined) {
  console.error("usage: bot.js <server URL> [classic|block|draw|all_fives|muggins|penalty]");
  process.exit(2);
}

function fail(what: string, response: Response, error: unknown): never {
  console.error(`${what}: unexpected answer ${response.status}: ${JSON.stringify(error)}`);
  process.exit(1);
}

// Resign is never listed; every other variant says what it credits.
const pointsOf = (move: Move): number => (move.type === "resign" ? 0 : (move.points ?? 0));

// The most points; on a tie the first listed (the server lists the claiming form first).
function best(moves: Move[]): Move | undefined {
  return moves.reduce<Move | undefined>((a, m) => (a === undefined || pointsOf(m) > pointsOf(a) ? m : a), undefined);
}

const lobby = createClient<paths>({ baseUrl: server });
const created = await lobby.POST("/v1/games", {
  body: { preset, bots: [{ seat: 1, level: "greedy" }] },
});
if (created.data === undefined || created.response.status !== 201) fail("create game", created.response, created.error);
const id = created.data.game_id;

const seat = await lobby.POST("/v1/games/{id}/seats", {
  params: { path: { id } },
  body: { name: "ts-bot" },
});
if (seat.data === undefined || seat.response.status !== 201) fail("take seat", seat.response, seat.error);
const me = seat.data.seat;
console.log(`game ${id} (${preset}): playing seat ${me}`);
console.log(`watch it at ${server.replace(/\/$/, "")}/watch/${id}`);

const play = createClient<paths>({ baseUrl: server, headers: { Authorization: `Bearer ${seat.data.token}` } });
let view: GameView = seat.data.view;
let moves = 0;
let lostToMuggins = 0;
while (view.status !== "finished") {
  const move = best(view.legal_moves);
  if (move === undefined) {
    // Not ours to move: wait (long poll) until the game changes.
    const next = await play.GET("/v1/games/{id}", {
      params: { path: { id }, query: { after: view.version, wait: 30 } },
    });
    if (next.data === undefined || next.response.status !== 200) fail("read view", next.response, next.error);
    view = next.data;
    continue;
  }
  // The entry goes back unchanged: a legal move is already a move body.
  const answer = await play.POST("/v1/games/{id}/moves", {
    params: { path: { id }, header: { "Idempotency-Key": randomUUID() } },
    body: move,
  });
  if (answer.data === undefined || answer.response.status !== 200) fail(`move ${JSON.stringify(move)}`, answer.response, answer.error);
  moves += 1;
  for (const event of answer.data.events) {
    if (event.type === "muggins_taken" && event.from === me) lostToMuggins += event.points;
  }
  view = answer.data;
  if (moves > 2000) {
    console.error("more than 2000 moves: giving up");
    process.exit(1);
  }
}

const result = view.result;
console.log(
  `game ${id} finished: scores ${JSON.stringify(view.scores)}, winner ${result?.winner ?? "none (drawn)"}; ` +
    `we made ${moves} moves and lost ${lostToMuggins} points to muggins calls`,
);
if (lostToMuggins > 0) process.exit(1);
