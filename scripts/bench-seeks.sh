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
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

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

log "building ($BENCH_PROFILE)"
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --bin domino-server --example matchmaking

for i in $(seq "${SERVERS:-2}"); do
    server_log="$work_dir/server-$i.log"
    start_bench_server "$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server" REDIS_URL="$REDIS_URL"
    pids+=("$server_pid")
    urls+=(--url "$url")
done

printf 'machine: %s cores (%s), %s, %s\n' "$(nproc)" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
    "$(redis-server --version | cut -d' ' -f3)" "$(rustc --version)"
"$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/matchmaking" "${urls[@]}" "$@"
