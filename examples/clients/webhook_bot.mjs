// @ts-check
// A bot the domino server calls: a webhook (docs/bots.md, "A bot the server calls").
//
// The server POSTs {"type": "move", "view": ...} when one of your player's seats is to move,
// and this answers with a move body, as POST /v1/games/{id}/moves takes it. Fill in
// chooseMove(); the rest checks that each call comes from the server. Node 20, built-ins
// only: plain JavaScript with JSDoc types, so it runs as it is (no npm install, no tsc).
//
//   node webhook_bot.mjs --port 8787                  # no secret yet: answers pings only
//   DOMINO_WEBHOOK_SECRET=... node webhook_bot.mjs    # the secret PUT /v1/players/me/webhook showed
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

/** @typedef {{type: string, points?: number | null, tile?: string, end?: string | null, claim?: number | null}} Move */
/** @typedef {{legal_moves: Move[], [field: string]: unknown}} View  as GET /v1/games/{id} answers it */

const SECRET = process.env.DOMINO_WEBHOOK_SECRET ?? "";
const MAX_AGE_MS = 5 * 60 * 1000; // a call signed longer ago (or further ahead) than this is refused
const MAX_BODY = 1 << 20;

/** Your seat's view -> one entry of its legal_moves, posted back as it is. The default, as
 * runner.ts's: the most points, first of equals (under muggins the claiming form of a
 * scoring play is listed first).
 * @param {View} view @returns {Move} */
function chooseMove(view) {
  let best = view.legal_moves[0];
  for (const move of view.legal_moves) if ((move.points ?? 0) > (best?.points ?? 0)) best = move;
  if (!best) throw new Error("no legal move");
  return best;
}

/** Domino-Signature: t=<unix ms>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")> (Stripe's
 * scheme; any one of several v1 may match). False without a secret, or for a stale t.
 * @param {string} header @param {Buffer} body @returns {boolean} */
function signatureOk(header, body) {
  const fields = header.split(",").map((part) => {
    const i = part.indexOf("=");
    return i < 0 ? ["", ""] : [part.slice(0, i).trim(), part.slice(i + 1).trim()];
  });
  const t = fields.find(([key]) => key === "t")?.[1] ?? "";
  if (!SECRET || !/^\d+$/.test(t) || Math.abs(Date.now() - Number(t)) > MAX_AGE_MS) return false;
  const expected = Buffer.from(createHmac("sha256", SECRET).update(`${t}.`).update(body).digest("hex"));
  return fields.some(([key, value]) => {
    const given = Buffer.from(key === "v1" ? value : "");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const server = createServer((req, res) => {
  /** @param {number} status @param {unknown} obj */
  const answer = (status, obj) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(obj));
    console.log(`${new Date().toISOString()} "${req.method} ${req.url}" ${status}`);
  };
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) req.destroy(); // not the server's: its calls are a few KiB
    else chunks.push(chunk);
  });
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const header = req.headers["domino-signature"];
    const signed = signatureOk(typeof header === "string" ? header : "", body);
    let call;
    try {
      call = JSON.parse(body.toString("utf8"));
    } catch {
      return answer(400, { error: "body is not JSON" });
    }
    // A ping is answered whatever its signature: the server sends it while registering the
    // webhook (PUT /v1/players/me/webhook), before that call's answer shows the secret, so
    // this process cannot know the secret yet. Echoing a challenge plays no move and tells
    // nobody anything.
    if (call?.type === "ping") return answer(200, { challenge: call.challenge });
    if (!signed) return answer(401, { error: SECRET ? "bad or stale signature" : "no DOMINO_WEBHOOK_SECRET set" });
    if (call?.type !== "move") return answer(400, { error: `unknown call type ${JSON.stringify(call?.type)}` });
    let move;
    try {
      move = chooseMove(call.view);
    } catch (error) {
      console.error(`game ${call.game_id}: chooseMove failed:`, error); // a failure the server counts
      return answer(500, { error: String(error) });
    }
    answer(200, move);
  });
});

const arg = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
};
const host = arg("--host", "127.0.0.1"); // 0.0.0.0 to be reachable from elsewhere
server.listen(Number(arg("--port", "8787")), host, () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : "?";
  const mode = SECRET ? "secret set" : "no DOMINO_WEBHOOK_SECRET: answering pings only";
  console.log(`webhook bot on http://${host}:${port}/ (${mode})`);
});
