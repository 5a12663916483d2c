#!/usr/bin/env bash
# Builds and runs the example clients (examples/clients/) against a fresh server: the
# TypeScript bot (types from openapi-typescript, compiled with `tsc` in strict mode) plays
# an all_fives game, the Python bot (a client from openapi-python-client) a muggins game;
# both against the built-in `greedy` bot, both posting `legal_moves` entries unchanged
# (checked by `tsc --strict` and `mypy --strict` against the generated types).
# The Python bot fails if a muggins call took any of its points (it reads the game's log).
# Then each bot-account runner (runner.ts, runner.py) plays a small duplicate match against
# `greedy` in its `match` mode (its games announced on the player's stream) and must see
# it finished, then seeks a game in its seek mode (`--seek`) that falls back to `greedy`
# after a short wait, and plays it to the end: the game must be finished, against greedy;
# then enters a round robin with two built-in levels (`--tournament`) and plays it to its
# end: finished, with each of its player's games played; then enters a league against
# `greedy` (`league ID --matches 1`) and plays until one of its matches is counted. Both
# matches are seeded with the same text, and must have dealt the same hands deal by deal
# (their games' exports). Each runner also challenges `greedy` by name (`challenge
# greedy`) and plays the game to its end; the Python runner makes, enters and starts a
# round robin itself (`tournament create`); and both play a match against a second
# server whose rate limit (2 requests a second an address) refuses them often: each must
# say it waited (`retry: ... 429`) and finish its match.
#
# - Clients are generated from the committed openapi/openapi.json on every run, so a
#   schema change that breaks a typed client fails here.
# - Installs what they need (the pinned npm packages of examples/clients/typescript's
#   package-lock.json with `npm ci`; examples/clients/python/requirements.txt in a venv)
#   under ${CARGO_TARGET_DIR:-target}/clients-cache, once; fails loudly if it cannot (the
#   check is never skipped silently).
# - Starts the debug server binary (built here if needed) on a free loopback port with
#   the in-memory store, and stops it on exit.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD

log() { printf 'clients.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/server-lib.sh
source scripts/server-lib.sh

target_dir=${CARGO_TARGET_DIR:-target}
cache="$target_dir/clients-cache"
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# ---- TypeScript: npm ci once per lock file, then generate, compile and (below) run ----
ts_src=examples/clients/typescript
ts="$cache/typescript"
mkdir -p "$ts"
lock_sum=$(sha256sum "$ts_src/package-lock.json" | cut -d" " -f1)
if [[ $(cat "$ts/.installed" 2>/dev/null) != "$lock_sum" ]]; then
    log "installing the TypeScript client's packages into $ts (npm ci)"
    rm -rf "$ts/node_modules" "$ts/.installed"
    cp "$ts_src/package.json" "$ts_src/package-lock.json" "$ts/"
    (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error) \
        || { log "FAILED: npm ci in $ts"; exit 1; }
    echo "$lock_sum" >"$ts/.installed"
fi

# ---- Python: a venv with the pinned generator, then a client package generated here ----
py_src=examples/clients/python
venv="$cache/python-venv"
req_sum=$(sha256sum "$py_src/requirements.txt" | cut -d" " -f1)
if [[ $(cat "$venv/.installed" 2>/dev/null) != "$req_sum" ]]; then
    log "installing $py_src/requirements.txt into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" || { log "FAILED: python3 -m venv (is python3-venv installed?)"; exit 1; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$py_src/requirements.txt" \
        || { log "FAILED: pip install -r $py_src/requirements.txt"; exit 1; }
    echo "$req_sum" >"$venv/.installed"
fi
install_only && exit 0

# ---- the clients, generated and type-checked ----
cp "$ts_src/tsconfig.json" "$ts_src/bot.ts" "$ts_src/runner.ts" "$ts/"
rm -rf "$ts/dist"
(cd "$ts" && node_modules/.bin/openapi-typescript "$root/openapi/openapi.json" --output schema.d.ts --silent) \
    || { log "FAILED: openapi-typescript"; exit 1; }
(cd "$ts" && node_modules/.bin/tsc) || { log "FAILED: tsc (strict) on $ts_src/bot.ts and runner.ts"; exit 1; }
py_client="$cache/python-client"
# Its one warning is for /metrics (an OpenMetrics text answer it leaves out): not needed.
"$venv/bin/openapi-python-client" generate --path openapi/openapi.json \
    --config "$py_src/config.yaml" --output-path "$py_client" --overwrite >"$cache/python-generate.log" 2>&1 \
    || { log "FAILED: openapi-python-client generate:"; cat "$cache/python-generate.log" >&2; exit 1; }
# The types, not only the run: an entry of legal_moves must be what the move call takes.
MYPYPATH="$py_client" "$venv/bin/mypy" --strict --no-incremental "$py_src/bot.py" "$py_src/runner.py" \
    || { log "FAILED: mypy --strict on $py_src/bot.py and runner.py"; exit 1; }

# ---- the server ----
server_binary

work=$(mktemp -d "${TMPDIR:-/tmp}/domino-clients.XXXXXX")
server_pid=""
limited_pid=""
cleanup() {
    for pid in $server_pid $limited_pid; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

port=$(free_port)
# Allowed to call the webhook kits on loopback (below).
env -u REDIS_URL BIND_ADDR="127.0.0.1:$port" LOG_FORMAT=json RUST_LOG=warn WEBHOOK_ALLOW_PRIVATE=true \
    "$server_bin" >"$work/server.log" 2>&1 &
server_pid=$!
wait_port "$port" "$server_pid" || { cat "$work/server.log" >&2; exit 1; }
url="http://127.0.0.1:$port"

# ---- the bots ----
status=0
# Each prints a link to watch its game, which must open the game's page.
watch_link_opens() { # <bot's output file> <what>
    local link
    link=$(grep -o "$url/watch/[0-9a-f-]*" "$1" | head -n 1 || true)
    [[ -n $link ]] && curl -fsS -o /dev/null "$link" \
        || { log "FAILED: the $2 printed no watch link that opens (${link:-none})"; status=1; }
}
node "$ts/dist/bot.js" "$url" all_fives | tee "$work/ts-bot.out" || { log "FAILED: the TypeScript bot"; status=1; }
watch_link_opens "$work/ts-bot.out" "TypeScript bot"
PYTHONPATH="$py_client" "$venv/bin/python" "$py_src/bot.py" "$url" | tee "$work/py-bot.out" \
    || { log "FAILED: the Python bot"; status=1; }
watch_link_opens "$work/py-bot.out" "Python bot"
# Each runner's help names every built-in level the server has (its OpenAPI `BotLevel`).
levels=$(curl -fsS "$url/openapi.json" | python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["components"]["schemas"]["BotLevel"]["enum"]))')
ts_help=$(node "$ts/dist/runner.js" 2>&1 || true)
py_help=$(PYTHONPATH="$py_client" "$venv/bin/python" "$py_src/runner.py" "$url" match --help 2>&1 || true)
for level in $levels; do
    grep -qw "$level" <<<"$ts_help" || { log "FAILED: the TypeScript runner's help leaves out $level"; status=1; }
    grep -qw "$level" <<<"$py_help" || { log "FAILED: the Python runner's help leaves out $level"; status=1; }
done
[[ $levels == *master* ]] || { log "FAILED: no level list read from the server ($levels)"; status=1; }
# The runners: a bot account each, a two-deal duplicate match of one round a game, two
# games at a time; each exits 0 once its match is finished (timeout: a match that stalls).
match_args=(match --opponent greedy --preset block --deals 2 --parallel 2 --rules '{"target":null,"rounds":1}'
    --seed clients.sh)
timeout 120 node "$ts/dist/runner.js" "$url" "${match_args[@]}" | tee "$work/ts-match.out" \
    || { log "FAILED: the TypeScript runner"; status=1; }
PYTHONPATH="$py_client" timeout 120 "$venv/bin/python" "$py_src/runner.py" "$url" "${match_args[@]}" \
    | tee "$work/py-match.out" || { log "FAILED: the Python runner"; status=1; }
# The same seed, the same deals: each deal's games dealt the same hands in both matches.
python3 - "$url" "$work/ts-match.out" "$work/py-match.out" <<'PY' || { log "FAILED: two matches of one seed dealt differently"; status=1; }
import json, re, sys, urllib.request
def deals(path):
    by_deal = {}
    for deal, game in re.findall(r"deal (\d+): game ([0-9a-f-]+)", open(path).read()):
        export = json.load(urllib.request.urlopen(f"{sys.argv[1]}/v1/games/{game}/export"))
        by_deal.setdefault(int(deal), []).append(json.dumps(export["deals"], sort_keys=True))
    return {d: sorted(g) for d, g in by_deal.items()}
a, b = deals(sys.argv[2]), deals(sys.argv[3])
print(f"seeded matches: {len(a)} and {len(b)} deals, the same: {a == b}")
sys.exit(0 if a and a == b else 1)
PY
# The seek mode, one runner after the other: two seeks at once in one pool would pair
# with each other rather than fall back.
seek_args=(--seek block --fallback greedy --fallback-after 2)
seek_finished_against_greedy() { # <runner's output file> <what>
    local game
    game=$(grep -oE "(matched|accepted), game [0-9a-f-]*" "$1" | head -n 1 | cut -d" " -f3 || true)
    [[ -n $game ]] && curl -fsS "$url/v1/games/$game" | python3 -c '
import json, sys
view = json.load(sys.stdin)
bots = [s["bot"] for s in view["seats"] if s["bot"]]
sys.exit(0 if view["status"] == "finished" and bots == ["greedy"] else 1)' \
        || { log "FAILED: the $2's seek did not end in a finished game against greedy (${game:-no game})"; status=1; }
}
timeout 120 node "$ts/dist/runner.js" "$url" "${seek_args[@]}" | tee "$work/ts-seek.out" \
    || { log "FAILED: the TypeScript runner's seek"; status=1; }
seek_finished_against_greedy "$work/ts-seek.out" "TypeScript runner"
PYTHONPATH="$py_client" timeout 120 "$venv/bin/python" "$py_src/runner.py" "$url" "${seek_args[@]}" \
    | tee "$work/py-seek.out" || { log "FAILED: the Python runner's seek"; status=1; }
seek_finished_against_greedy "$work/py-seek.out" "Python runner"
# A challenge by name: greedy accepts at once; each runner plays the game to its end.
challenge_args=(challenge greedy --preset block --rules '{"target":null,"rounds":1}')
timeout 120 node "$ts/dist/runner.js" "$url" "${challenge_args[@]}" | tee "$work/ts-challenge.out" \
    || { log "FAILED: the TypeScript runner's challenge"; status=1; }
seek_finished_against_greedy "$work/ts-challenge.out" "TypeScript runner's challenge"
PYTHONPATH="$py_client" timeout 120 "$venv/bin/python" "$py_src/runner.py" "$url" "${challenge_args[@]}" \
    | tee "$work/py-challenge.out" || { log "FAILED: the Python runner's challenge"; status=1; }
seek_finished_against_greedy "$work/py-challenge.out" "Python runner's challenge"
# The tournament mode, one runner after the other: an organiser account makes a round
# robin of block (one round a game) with two built-in levels; the runner enters it with its
# player's key, the organiser starts it once the runner is in, and the runner plays every
# game it gives and exits 0 once it is over: finished, the runner's player having met both
# levels, every one of its games finished.
field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
organiser=$(curl -fsS -X POST "$url/v1/players" -H 'content-type: application/json' \
    -d '{"name": "organiser"}' | field key)
tournament_played() { # <what> <runner command...>
    local what=$1 id deadline
    shift
    id=$(curl -fsS -X POST "$url/v1/tournaments" -H "authorization: Bearer $organiser" \
        -H 'content-type: application/json' -d '{"name": "clients.sh", "preset": "block",
        "format": "round_robin", "rules": {"target": null, "rounds": 1}, "levels": ["random", "greedy"]}' | field id)
    timeout 120 "$@" --tournament "$id" >"$work/tournament.out" 2>&1 &
    local runner=$!
    deadline=$((SECONDS + 30))
    until [[ $(curl -fsS "$url/v1/tournaments/$id" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["players"]))') == 3 ]]; do
        ((SECONDS < deadline)) || { log "FAILED: the $what did not enter tournament $id in 30 s"; break; }
        sleep 0.2
    done
    curl -fsS -o /dev/null -X POST "$url/v1/tournaments/$id/start" -H "authorization: Bearer $organiser" \
        || log "FAILED: starting tournament $id"
    wait "$runner" || { log "FAILED: the $what's tournament mode"; cat "$work/tournament.out" >&2; status=1; return; }
    cat "$work/tournament.out"
    curl -fsS "$url/v1/tournaments/$id" | python3 -c '
import json, sys, urllib.request
t = json.load(sys.stdin)
me = [p["id"] for p in t["players"] if p["id"] not in ("random", "greedy")]
mine = [p for p in t["pairings"] if me and me[0] in (p["a"], p["b"])]
met = sorted(p["b"] if p["a"] == me[0] else p["a"] for p in mine)
games = [json.load(urllib.request.urlopen(f"{sys.argv[1]}/v1/games/{g}")) for p in mine for g in p["games"]]
ok = (t["status"] == "finished" and met == ["greedy", "random"] and all(p["result"] for p in mine)
      and len(games) == 4 and all(g["status"] == "finished" for g in games))
sys.exit(0 if ok else 1)' "$url" \
        || { log "FAILED: the $what's tournament $id did not end with its player's games all played"; status=1; }
}
tournament_played "TypeScript runner" node "$ts/dist/runner.js" "$url"
tournament_played "Python runner" env PYTHONPATH="$py_client" "$venv/bin/python" "$py_src/runner.py" "$url"
# The league mode, one runner after the other: the organiser makes a league of block (one
# round a game, one deal a match) with greedy entered; the runner enters it with its
# player's key and keeps its stream open (what makes a pulling bot available), plays the
# match the league gives it, and exits 0 once one of its matches is counted (`--matches
# 1`): counted, its row showing it, each of the match's games finished.
league_played() { # <what> <runner command...>
    local what=$1 id
    shift
    id=$(curl -fsS -X POST "$url/v1/leagues" -H "authorization: Bearer $organiser" \
        -H 'content-type: application/json' -d '{"name": "clients.sh", "preset": "block",
        "rules": {"target": null, "rounds": 1}, "deals_per_match": 1, "max_concurrent": 1,
        "levels": ["greedy"]}' | field id)
    timeout 60 "$@" league "$id" --matches 1 >"$work/league.out" 2>&1 \
        || { log "FAILED: the $what's league mode"; cat "$work/league.out" >&2; status=1; return; }
    cat "$work/league.out"
    curl -fsS "$url/v1/leagues/$id" | python3 -c '
import json, sys, urllib.request
league = json.load(sys.stdin)
mine = [e for e in league["entrants"] if e["id"] != "greedy"]
counted = [r["match_id"] for r in league["recent"] if r["result"] != "void"]
games = [g for m in counted for g in json.load(urllib.request.urlopen(f"{sys.argv[1]}/v1/matches/{m}"))["games"]]
ok = (league["matches_counted"] >= 1 and mine and mine[0]["matches"] >= 1 and len(games) >= 2
      and all(g["status"] == "finished" for g in games))
sys.exit(0 if ok else 1)' "$url" \
        || { log "FAILED: the $what's league $id did not count one of its matches, played through"; status=1; }
}
league_played "TypeScript runner" node "$ts/dist/runner.js" "$url"
league_played "Python runner" env PYTHONPATH="$py_client" "$venv/bin/python" "$py_src/runner.py" "$url"
# A tournament the runner makes, enters and starts itself.
PYTHONPATH="$py_client" timeout 120 "$venv/bin/python" "$py_src/runner.py" "$url" tournament create \
    --title "made by a runner" --preset block --format round_robin --levels random,greedy --start \
    --rules '{"target":null,"rounds":1}' | tee "$work/py-made.out" \
    || { log "FAILED: the Python runner's tournament create"; status=1; }
grep -q "tournament .* finished, round" "$work/py-made.out" \
    || { log "FAILED: the tournament the Python runner made did not finish"; status=1; }
# Against a tiny rate limit: the runners wait as Retry-After says, and finish.
limited_port=$(free_port)
env -u REDIS_URL BIND_ADDR="127.0.0.1:$limited_port" LOG_FORMAT=json RUST_LOG=warn RATE_LIMIT_PER_IP=2 \
    "$server_bin" >"$work/limited.log" 2>&1 &
limited_pid=$!
wait_port "$limited_port" "$limited_pid" || { cat "$work/limited.log" >&2; exit 1; }
limited="http://127.0.0.1:$limited_port"
retried_and_finished() { # <runner's output file> <what>
    grep -q "^retry: .* answered 429 (too many requests: over the per-ip limit" "$1" \
        && grep -q "match .* finished: 2/2 deals" "$1" \
        || { log "FAILED: the $2 did not retry a 429 and finish its match"; status=1; }
}
# One deal at a time (its two games and the match's poll still share 2 requests a second):
# the runners' retries wait Retry-After plus a random part, since three calls refused
# together and sent again together lost to each other five times running (CI, once).
limited_args=("${match_args[@]}")
limited_args[8]=1
timeout 180 node "$ts/dist/runner.js" "$limited" "${limited_args[@]}" >"$work/ts-limited.out" 2>&1 \
    || { log "FAILED: the TypeScript runner against a rate limit"; cat "$work/ts-limited.out" >&2; status=1; }
retried_and_finished "$work/ts-limited.out" "TypeScript runner"
PYTHONPATH="$py_client" timeout 180 "$venv/bin/python" "$py_src/runner.py" "$limited" "${limited_args[@]}" \
    >"$work/py-limited.out" 2>&1 \
    || { log "FAILED: the Python runner against a rate limit"; cat "$work/py-limited.out" >&2; status=1; }
retried_and_finished "$work/py-limited.out" "Python runner"
grep -c "^retry: " "$work/ts-limited.out" "$work/py-limited.out" | sed 's/^/calls sent again, /'
kill "$limited_pid" 2>/dev/null || true
# The webhook kits against the server, as docs/bots.md's walk-through runs them: each kit
# started without a secret answers the registration's ping, is started again with the
# secret shown, and plays a bot account's whole duplicate match against greedy with no
# loop of its own; every call's signature checked by the kit's own code (a call it
# refused would be a failure the webhook counts).
webhook_match() { # <what> <command to start the kit, after which its port>
    local what=$1 kit_pid
    shift
    local kit_port
    kit_port=$(free_port)
    "$@" --port "$kit_port" >"$work/kit.out" 2>&1 & kit_pid=$!
    wait_port "$kit_port" "$kit_pid" || { log "FAILED: the $what did not start"; cat "$work/kit.out" >&2; status=1; return; }
    local key secret
    key=$(curl -fsS -X POST "$url/v1/players" -H 'content-type: application/json' \
        -d "{\"name\": \"hook$kit_port\", \"bot\": true}" | field key)
    secret=$(curl -fsS -X PUT "$url/v1/players/me/webhook" -H "authorization: Bearer $key" \
        -H 'content-type: application/json' -d "{\"url\": \"http://127.0.0.1:$kit_port/\"}" | field secret) \
        || { log "FAILED: the $what's webhook was not registered"; status=1; kill "$kit_pid"; return; }
    kill "$kit_pid"; wait "$kit_pid" 2>/dev/null || true
    DOMINO_WEBHOOK_SECRET=$secret "$@" --port "$kit_port" >"$work/kit.out" 2>&1 & kit_pid=$!
    wait_port "$kit_port" "$kit_pid" || { log "FAILED: the $what did not start again"; status=1; return; }
    python3 - "$url" "$key" "$what" <<'PY' || { log "FAILED: the $what's match"; cat "$work/kit.out" >&2; status=1; }
import json, sys, time, urllib.request
url, key, what = sys.argv[1:4]
def call(method, path, body=None):
    req = urllib.request.Request(url + path, method=method, data=json.dumps(body).encode() if body else None,
        headers={"authorization": f"Bearer {key}", "content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))
m = call("POST", "/v1/matches", {"opponent": "greedy", "preset": "block", "deals": 2, "parallel": 2,
    "rules": {"target": None, "rounds": 1}})
deadline = time.time() + 90
while (m := call("GET", f"/v1/matches/{m['id']}"))["status"] != "finished":
    assert time.time() < deadline, f"the match never finished: {m}"
    time.sleep(0.5)
hook = call("GET", "/v1/players/me/webhook")
print(f"{what}: match finished, {len(m['games'])} games; webhook calls {hook['calls']}, failures {hook['failures']}, latency {hook['latency_ms']}")
sys.exit(0 if hook["calls"] > 0 and hook["failures"] == 0 and hook["status"] == "active" else 1)
PY
    kill "$kit_pid" 2>/dev/null; wait "$kit_pid" 2>/dev/null || true
}
webhook_match "Python webhook kit" python3 examples/clients/webhook_bot.py
webhook_match "JavaScript webhook kit" node examples/clients/webhook_bot.mjs
if [[ $status != 0 ]]; then
    log "the server's log:"
    tail -n 30 "$work/server.log" >&2
    exit 1
fi
printf 'clients: the TypeScript and the Python example bots played whole games, and both runners a whole seeded match (the same deals), a seek that fell back to greedy, a challenge by name, a round robin against two levels, a league match against greedy and a match under a tiny rate limit (retried after Retry-After); the Python runner a round robin it made; both webhook kits a whole match, called by the server\n'
