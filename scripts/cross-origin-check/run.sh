#!/usr/bin/env bash
# A browser client on another origin plays a move. A static page (page/index.html) is
# served from its own port; its script calls the API server on another port with fetch:
# creates a game against a bot, takes a seat, reads the view with the seat's bearer token
# and posts a legal move with an Idempotency-Key. Headless Chromium opens it twice:
#   1. the server runs with CORS_ORIGINS=<the page's origin>: the page must play the move;
#   2. the server runs without CORS_ORIGINS: the browser must block the page's first
#      request (the script sees the fetch fail and no answer).
#
# - Installs playwright-core (pinned by package-lock.json, `npm ci`) under
#   ${CARGO_TARGET_DIR:-target}/clients-cache/cross-origin-check once, and Debian's
#   chromium with apt-get if /usr/bin/chromium is missing; fails loudly if it cannot.
# - Builds the debug server if needed; the in-memory store; everything on free loopback
#   ports, stopped on exit.
set -euo pipefail

cd "$(dirname "$0")/../.."

log() { printf 'cross-origin-check: %s\n' "$*" >&2; }

here=scripts/cross-origin-check
target_dir=${CARGO_TARGET_DIR:-target}
deps="$target_dir/clients-cache/cross-origin-check"

# ---- chromium and playwright-core ----
# shellcheck source=scripts/server-lib.sh
source scripts/server-lib.sh
ensure_browser_deps "$here" "$deps" || exit 1
install_only && exit 0

# ---- the page's server and the API server ----
server_binary

work=$(mktemp -d "${TMPDIR:-/tmp}/domino-cross-origin.XXXXXX")
pids=()
stop_all() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    pids=()
}
api_pid=""
trap 'stop_api; stop_all; rm -rf "$work"' EXIT

page_port=$(free_port)
python3 -m http.server "$page_port" --bind 127.0.0.1 --directory "$here/page" >"$work/page.log" 2>&1 &
page_pid=$!
pids+=("$page_pid")
wait_port "$page_port" "$page_pid"

api_port=$(free_port)
start_api() { # extra environment for the server
    env -u REDIS_URL -u CORS_ORIGINS "$@" BIND_ADDR="127.0.0.1:$api_port" RUST_LOG=warn \
        "$server_bin" >>"$work/server.log" 2>&1 &
    api_pid=$!
    wait_port "$api_port" "$api_pid"
}
stop_api() {
    [[ -n $api_pid ]] || return 0
    kill "$api_pid" 2>/dev/null || true
    wait "$api_pid" 2>/dev/null || true
    api_pid=""
}
page="http://127.0.0.1:$page_port/index.html?api=http://127.0.0.1:$api_port"

status=0
start_api CORS_ORIGINS="http://127.0.0.1:$page_port"
NODE_PATH=$node_path node "$here/check.js" "$page" played || status=1
stop_api
start_api
NODE_PATH=$node_path node "$here/check.js" "$page" blocked || status=1
stop_api
if [[ $status != 0 ]]; then
    log "FAILED; the API server's log:"
    tail -n 30 "$work/server.log" >&2
    exit 1
fi
