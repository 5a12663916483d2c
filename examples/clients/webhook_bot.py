#!/usr/bin/env python3
"""A bot the domino server calls: a webhook (docs/bots.md, "A bot the server calls").

The server POSTs {"type": "move", "view": ...} when one of your player's seats is to move,
and this answers with a move body, as POST /v1/games/{id}/moves takes it. Fill in
choose_move(); the rest checks that each call comes from the server. Standard library only.

    python3 webhook_bot.py --port 8787                  # no secret yet: answers pings only
    DOMINO_WEBHOOK_SECRET=... python3 webhook_bot.py    # the secret PUT /v1/players/me/webhook showed
"""
import argparse
import hashlib
import hmac
import json
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ.get("DOMINO_WEBHOOK_SECRET", "").encode()
MAX_AGE_MS = 5 * 60 * 1000  # a call signed longer ago (or further ahead) than this is refused
MAX_BODY = 1 << 20


def choose_move(view):
    """Your seat's view (as GET /v1/games/{id} answers it) -> one entry of its legal_moves,
    posted back as it is. The default, as runner.py's: the most points, first of equals
    (under muggins the claiming form of a scoring play is listed first)."""
    return max(view["legal_moves"], key=lambda move: move.get("points") or 0)


def signature_ok(header, body):
    """Domino-Signature: t=<unix ms>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")> (Stripe's
    scheme; any one of several v1 may match). False without a secret, or for a stale t."""
    fields = [part.strip().split("=", 1) for part in header.split(",") if "=" in part]
    t = next((value for key, value in fields if key == "t"), "")
    try:
        fresh = abs(time.time() * 1000 - int(t)) <= MAX_AGE_MS
    except ValueError:
        return False
    expected = hmac.new(SECRET, f"{t}.".encode() + body, hashlib.sha256).hexdigest().encode()
    return bool(SECRET) and fresh and any(
        hmac.compare_digest(expected, value.encode()) for key, value in fields if key == "v1")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the server may reuse its connection

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True  # its body is left unread
            return self.answer(413, {"error": "body too large"})
        body = self.rfile.read(length)
        signed = signature_ok(self.headers.get("Domino-Signature", ""), body)
        try:
            call = json.loads(body)
            kind = call.get("type")
        except (ValueError, AttributeError):
            return self.answer(400, {"error": "body is not a JSON object"})
        # A ping is answered whatever its signature: the server sends it while registering
        # the webhook (PUT /v1/players/me/webhook), before that call's answer shows the
        # secret, so this process cannot know the secret yet. Echoing a challenge plays no
        # move and tells nobody anything.
        if kind == "ping":
            return self.answer(200, {"challenge": call.get("challenge")})
        if not signed:
            why = "bad or stale signature" if SECRET else "no DOMINO_WEBHOOK_SECRET set"
            return self.answer(401, {"error": why})
        if kind == "move":  # an exception in choose_move drops the connection: a failure
            return self.answer(200, choose_move(call["view"]))
        return self.answer(400, {"error": f"unknown call type {kind!r}"})

    def answer(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--host", default="127.0.0.1", help="0.0.0.0 to be reachable from elsewhere")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    mode = "secret set" if SECRET else "no DOMINO_WEBHOOK_SECRET: answering pings only"
    print(f"webhook bot on http://{args.host}:{server.server_port}/ ({mode})", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
