#!/usr/bin/env bash
# Runs one example against several server processes on one store: builds the release
# server and the example, makes sure a Redis answers (as scripts/bench-load.sh does),
# starts SERVERS (default 2) server processes on it under one key prefix of their own,
# runs the example with `--url` for each of them and the arguments given, prints its
# figures and the machine, and stops what it started. The keys (prefix bench:<random>:)
# are deleted at the end; games expire after GAME_IDLE_TTL_SECS=600 anyway.
#
# `scripts/bench-servers.sh EXAMPLE [ARGS...]`; scripts/bench-seeks.sh and
# scripts/bench-tournament.sh name theirs.
set -euo pipefail

example=${1:?an example name}
shift

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-servers.sh (%s): %s\n' "$example" "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-$example.XXXXXX")
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
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --bin domino-server --example "$example"

for i in $(seq "${SERVERS:-2}"); do
    server_log="$work_dir/server-$i.log"
    start_bench_server "$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server" REDIS_URL="$REDIS_URL"
    pids+=("$server_pid")
    urls+=(--url "$url")
done

machine_line
echo "versions: $(rustc --version), $(redis-server --version | cut -d' ' -f1-3)"
"$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/$example" "${urls[@]}" "$@"
