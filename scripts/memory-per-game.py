#!/usr/bin/env python3
"""What one game costs a server on the memory store: its resident memory (VmRSS) before
and after creating N games (each against a greedy bot, optionally joined and played for
MOVES moves), divided by N. Start the server first, with the caps off, e.g.
  MEMORY_MAX_GAMES=0 MEMORY_MAX_BYTES=0 MAX_WAITING_PER_IP=0 MAX_GAMES_PER_IP=0 \
  RATE_LIMIT_PER_IP=0 RATE_LIMIT_PER_TOKEN=0 BIND_ADDR=127.0.0.1:8080 domino-server &
  scripts/memory-per-game.py 8080 $! 20000 '{"preset": "classic", "bots": [{"seat": 1, "level": "greedy"}]}' 0
"""
import http.client, json, sys, time
port = int(sys.argv[1]); pid = sys.argv[2]; n = int(sys.argv[3]); body = sys.argv[4]; moves = int(sys.argv[5])
def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"): return int(line.split()[1]) * 1024
c = http.client.HTTPConnection("127.0.0.1", port)
def post(path, b, token=None):
    h = {"content-type": "application/json"}
    if token: h["authorization"] = "Bearer " + token
    c.request("POST", path, json.dumps(b), h); r = c.getresponse(); d = r.read()
    return r.status, json.loads(d) if d else None
def get(path, token):
    c.request("GET", path, headers={"authorization": "Bearer " + token}); r = c.getresponse(); return json.loads(r.read())
# warm up
for _ in range(200): post("/v1/games", json.loads(body))
time.sleep(1); before = rss()
for i in range(n):
    s, g = post("/v1/games", json.loads(body))
    assert s == 201, (s, g)
    if moves:
        s, j = post(f"/v1/games/{g['game_id']}/seats", {"name": "m"})
        tok = j["token"]
        for _ in range(moves):
            v = get(f"/v1/games/{g['game_id']}", tok)
            if v["status"] != "playing" or not v.get("legal_moves"): break
            post(f"/v1/games/{g['game_id']}/moves", v["legal_moves"][0], tok)
time.sleep(1); after = rss()
print(f"games {n} rss before {before} after {after} per game {(after-before)/n:.0f}")
