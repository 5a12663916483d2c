#!/usr/bin/env bash
# The watch page (/watch/{id}) in headless Chromium against the debug server (check.js:
# a spectator's tiles, a seat's hand, live moves, a whole game played by clicking with the
# tile about to be played marked, a replay, every round's result, a refused token falling
# back to the spectator's view, pips of 4 px or more at 390 px on a 1x screen), a player's
# page with its rating chart and recent games after rated games, a leaderboard, the
# lobby naming the players, the home page (/) and the /tournaments and /leaderboard
# indexes, a tournament's page following a round robin of built-in levels (made and
# started through the API) to its end with its crosstable, and a league's page following a
# league of two levels and a pulling bot (played by check.js through the bot's stream)
# until a match is counted, with the /leagues index and the links to it, after the unit
# tests of its layout geometry and its scene (`node --test`).
# Screenshots at 390 and 1200 px are kept in ${CARGO_TARGET_DIR:-target}/watch-check/.
#
# - Installs playwright-core (pinned by package-lock.json, `npm ci`) under
#   ${CARGO_TARGET_DIR:-target}/clients-cache/watch-check once, and Debian's chromium with
#   apt-get if /usr/bin/chromium is missing; fails loudly if it cannot.
# - Builds the debug server if needed; the in-memory store; a free loopback port, stopped
#   on exit.
set -euo pipefail

cd "$(dirname "$0")/../.."

log() { printf 'watch-check: %s\n' "$*" >&2; }

here=scripts/watch-check
target_dir=${CARGO_TARGET_DIR:-target}
deps="$target_dir/clients-cache/watch-check"
shots="$target_dir/watch-check"

# ---- chromium and playwright-core ----
# shellcheck source=scripts/server-lib.sh
source scripts/server-lib.sh
ensure_browser_deps "$here" "$deps" || exit 1
install_only && exit 0

# ---- the geometry and the scene, without a browser ----
node --test "$here/" || { log "FAILED: the unit tests of the layout geometry and the scene"; exit 1; }

# ---- the server ----
server_binary

work=$(mktemp -d "${TMPDIR:-/tmp}/domino-watch-check.XXXXXX")
port=$(free_port)
env -u REDIS_URL -u REDIS_CLUSTER_NODES BIND_ADDR="127.0.0.1:$port" RUST_LOG=warn \
    "$server_bin" >"$work/server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
wait_port "$port" "$server_pid"

rm -rf "$shots"
if ! NODE_PATH=$node_path node "$here/check.js" "http://127.0.0.1:$port" "$shots"; then
    log "FAILED; the server's log:"
    tail -n 30 "$work/server.log" >&2
    exit 1
fi
