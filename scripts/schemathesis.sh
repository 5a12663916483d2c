#!/usr/bin/env bash
# Schemathesis against the committed OpenAPI document: every operation is called with
# generated requests, valid and invalid, and every answer must be no 5xx and must match
# the document (status code, content type, headers, body schema).
#
# - Installs schemathesis (pinned) from PyPI into a venv under the cargo target dir if it
#   is missing; fails loudly if it cannot (the check is never skipped silently).
# - Starts the debug server binary (built here if needed) on a free loopback port with
#   the in-memory store, and stops it on exit.
# - Bounded and reproducible: a fixed seed, a fixed number of examples per operation.
#
# Knobs (environment): SCHEMATHESIS_MAX_EXAMPLES (default 40), SCHEMATHESIS_SEED
# (default 1), SCHEMATHESIS_VERSION (default the pinned one below),
# SCHEMATHESIS_REDIS_URL (the server keeps its games there, under a fresh key prefix,
# instead of in memory). Extra arguments are passed to `schemathesis run` (e.g.
# `--include-path /v1/games`).
set -euo pipefail

cd "$(dirname "$0")/.."

log() { printf 'schemathesis.sh: %s\n' "$*" >&2; }

version=${SCHEMATHESIS_VERSION:-4.32.5}
max_examples=${SCHEMATHESIS_MAX_EXAMPLES:-40}
seed=${SCHEMATHESIS_SEED:-1}
target_dir=${CARGO_TARGET_DIR:-target}
venv="$target_dir/schemathesis-venv"
st="$venv/bin/schemathesis"

# ---- schemathesis itself ----
if ! [[ -x $st ]] || ! "$st" --version 2>/dev/null | grep -qF "version $version"; then
    log "installing schemathesis $version into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" || { log "FAILED: python3 -m venv (is python3-venv installed?)"; exit 1; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version" \
        || { log "FAILED: pip install schemathesis==$version"; exit 1; }
fi

# shellcheck source=scripts/server-lib.sh
source scripts/server-lib.sh
install_only && exit 0

# ---- the server ----
server_binary

work=$(mktemp -d "${TMPDIR:-/tmp}/domino-schemathesis.XXXXXX")
server_pid=""
cleanup() {
    if [[ -n $server_pid ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

port=$(free_port)
# The memory store by default: the run must not depend on (or litter) a Redis. Short
# long polls so a generated `wait=30` does not stall the run.
store=(-u REDIS_URL)
if [[ -n ${SCHEMATHESIS_REDIS_URL:-} ]]; then
    store=(REDIS_URL="$SCHEMATHESIS_REDIS_URL" REDIS_KEY_PREFIX="schemathesis:$$:$RANDOM:"
        GAME_IDLE_TTL_SECS=600)
fi
# It creates hundreds of waiting games from one address: no cap on them (tests/api/limits.rs
# covers the cap).
env "${store[@]}" BIND_ADDR="127.0.0.1:$port" LOG_FORMAT=json RUST_LOG=warn \
    LONG_POLL_MAX_SECS=1 MAX_WAITING_PER_IP=0 MAX_GAMES_PER_IP=0 "$server_bin" >"$work/server.log" 2>&1 &
server_pid=$!
wait_port "$port" "$server_pid" || { cat "$work/server.log" >&2; exit 1; }

# ---- fixtures: a game with a seat of ours (so moves get past 401 and reach the engine)
# and a finished game (so the export answers 200), given to the operations that need them.
api() { # method path [json body] [token]
    local args=(-sS --fail-with-body --max-time 10 -X "$1" "http://127.0.0.1:$port$2")
    [[ -n ${3:-} ]] && args+=(-H 'Content-Type: application/json' --data "$3")
    [[ -n ${4:-} ]] && args+=(-H "Authorization: Bearer $4")
    curl "${args[@]}"
}
playing=$(api POST /v1/games '{"preset":"all_fives","seats":2,"seed":"schemathesis","bots":[{"seat":1,"level":"random"}]}' | jq -r .game_id)
token=$(api POST "/v1/games/$playing/seats" '{"name":"schemathesis"}' | jq -r .token)
finished=$(api POST /v1/games '{"preset":"block","seats":2,"seed":"schemathesis","bots":[{"seat":0,"level":"random"},{"seat":1,"level":"random"}]}' | jq -r .game_id)
# Bots alone play in the background: wait for the end with long polls (1 s each here).
view=$(api GET "/v1/games/$finished")
for _ in $(seq 60); do
    [[ $(jq -r .status <<<"$view") == finished ]] && break
    view=$(api GET "/v1/games/$finished?after=$(jq -r .version <<<"$view")&wait=1")
done
[[ $(jq -r .status <<<"$view") == finished ]] || { log "the all-bot fixture game did not finish"; exit 1; }
cat >"$work/schemathesis.toml" <<TOML
# No cache left in the work tree.
[cache]
enabled = false

[[operations]]
include-operation-id = "make_move"
parameters = { "path.id" = "$playing" }
headers = { Authorization = "Bearer $token" }

# The event stream stays open while the game lives: read it for a second, not ten.
[[operations]]
include-operation-id = "game_events"
request-timeout = 1

[[operations]]
include-operation-id = "export_game"
parameters = { "path.id" = "$finished" }
TOML

log "schemathesis $version against 127.0.0.1:$port (max $max_examples examples per operation, seed $seed)"
status=0
# Through the venv's python, so that the module the workers import lazily (anyio, which
# compiles its own source on first import) is imported first here, in one thread: two
# workers importing it at once hit a CPython 3.11 bug ("SystemError: AST constructor
# recursion depth mismatch", gh-106905), which once failed a clean run.
"$venv/bin/python" -c '
import sys
import schemathesis.transport.asgi  # noqa: F401
from schemathesis.cli import schemathesis
sys.argv[0] = "schemathesis"
sys.exit(schemathesis())
' --config-file "$work/schemathesis.toml" run openapi/openapi.json \
    --url "http://127.0.0.1:$port" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --max-examples "$max_examples" \
    --seed "$seed" \
    --generation-database none \
    --request-timeout 10 \
    --workers 2 \
    --no-color \
    --report ndjson --report-dir "$target_dir/schemathesis-report" \
    "$@" 2>&1 | tee "$work/run.log" || status=$?

if [[ $status != 0 ]]; then
    log "FAILED (exit $status); the server's log:"
    tail -n 50 "$work/server.log" >&2
    exit "$status"
fi
# A panic or an error logged by our own code fails the run even if every answer looked
# fine (actix's own complaints about malformed requests are not ours).
if grep -E 'panicked|"level":"ERROR".*"target":"domino_server' "$work/server.log" >"$work/errors"; then
    log "FAILED: the server logged errors or panics:"
    tail -n 20 "$work/errors" >&2
    exit 1
fi
# The closing line in the plain form CI reads: test cases passed and failed.
cases=$(grep -oE '[0-9]+ generated, [0-9]+ passed' "$work/run.log" | tail -n 1)
printf 'schemathesis: %s passed, 0 failed\n' "$(echo "${cases##*, }" | cut -d" " -f1)"
