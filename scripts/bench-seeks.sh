#!/usr/bin/env bash
# The matchmaking benchmark: builds the release server and the matchmaking example, makes
# sure a Redis answers (as scripts/bench-load.sh does), starts SERVERS (default 2) server
# processes on it under one key prefix of their own, runs examples/matchmaking.rs through
# all of them, prints its figures and the machine, and stops what it started.
#
# Arguments go to the example, e.g. `scripts/bench-seeks.sh --players 400 --seconds 30`
# (see `cargo run --release --example matchmaking -- --help`). The keys (prefix
# bench:<random>:) are deleted at the end, and expire after GAME_IDLE_TTL_SECS=600 anyway.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-seeks.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-seeks.XXXXXX")
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"
pids=()
urls=()

cleanup() {
    local status=$? pid
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [[ -n ${REDIS_URL:-} ]] && answers "$REDIS_URL"; then
        redis-cli -u "$REDIS_URL" --scan --pattern "${prefix}*" 2>/dev/null \
            | xargs -r -n 500 redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
    fi
    stop_redis
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

ensure_redis

log "building (release)"
nice -n "${NICE:-5}" cargo build --release --quiet --bin domino-server --example matchmaking

for i in $(seq "${SERVERS:-2}"); do
    port=$(free_port) || exit 1
    BIND_ADDR="127.0.0.1:$port" \
        REDIS_KEY_PREFIX="$prefix" \
        GAME_IDLE_TTL_SECS=600 \
        RATE_LIMIT_PER_IP=1000000 \
        RATE_LIMIT_PER_TOKEN=1000000 \
        MAX_WAITING_PER_IP=0 \
        MAX_GAMES_PER_IP=0 \
        MAX_PLAYERS_PER_IP=0 \
        LOG_FORMAT=json \
        RUST_LOG="${SERVER_RUST_LOG:-warn}" \
        "$CARGO_TARGET_DIR/release/domino-server" >"$work_dir/server-$i.log" 2>&1 &
    pids+=($!)
    url="http://127.0.0.1:$port"
    for _ in $(seq 600); do
        [[ $(curl -s -o /dev/null -w '%{http_code}' "$url/readyz" 2>/dev/null) == 200 ]] && break
        sleep 0.1
    done
    [[ $(curl -s -o /dev/null -w '%{http_code}' "$url/readyz") == 200 ]] || {
        log "server $i is not ready"
        cat "$work_dir/server-$i.log" >&2
        exit 1
    }
    urls+=(--url "$url")
done

printf 'machine: %s cores (%s), %s, %s\n' "$(nproc)" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
    "$(redis-server --version | cut -d' ' -f3)" "$(rustc --version)"
"$CARGO_TARGET_DIR/release/examples/matchmaking" "${urls[@]}" "$@"
