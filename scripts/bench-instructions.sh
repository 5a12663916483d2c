#!/usr/bin/env bash
# Instructions per move of two server binaries, in one run: each runs under callgrind on
# one Redis at 100 moves/s (8 clients, 20 s after 8 s of warm-up, as the last part of
# scripts/bench-load.sh --cluster), the two taking turns ROUNDS times (default 2).
# Instructions, unlike CPU time, do not depend on what else the two cores run: this is how
# a release profile or a build of another commit is compared with today's.
#
#   scripts/bench-instructions.sh BEFORE_BINARY AFTER_BINARY
#
# The load client is this checkout's (examples/load.rs, built here with the benches' profile). Redis comes
# from scripts/redis-lib.sh as for the tests; the bench's keys (prefix bench:<random>:) are
# deleted at the end.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-instructions.sh: %s\n' "$*" >&2; }

[[ $# == 2 ]] || { log "usage: $0 BEFORE_BINARY AFTER_BINARY"; exit 2; }
binaries=("$1" "$2")
command -v callgrind_control >/dev/null || { log "needs valgrind (apt-get install valgrind)"; exit 1; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-instructions.XXXXXX")
server_pid=""
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"
cleanup() {
    local status=$?
    stop_bench_server
    if [[ -n ${REDIS_URL:-} ]]; then
        redis-cli -u "$REDIS_URL" --scan --pattern "${prefix}*" 2>/dev/null \
            | xargs -r -n 500 redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
    fi
    stop_redis
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

ensure_redis
log "building the load client ($BENCH_PROFILE)"
cargo build --profile "$BENCH_PROFILE" --quiet --example load
load() { "$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/load" --url "$url" --server-pid "$server_pid" "$@"; }

machine_line
echo "command: scripts/bench-instructions.sh $*"
for round in $(seq "${ROUNDS:-2}"); do
    for which in 0 1; do
        name=$([[ $which == 0 ]] && echo before || echo after)
        if callgrind_count start_bench_server "${binaries[$which]}" REDIS_URL="$REDIS_URL" \
            -- load --clients 8 --seconds 8 --rate 100 \
            -- load --clients 8 --seconds 20 --warmup 0 --rate 100 -- "$CALLGRIND_MOVES"; then
            echo "round $round, $name (${binaries[$which]}): $((callgrind_total / callgrind_units)) instructions per move ($callgrind_units moves)"
        else
            echo "round $round, $name: not measured"
        fi
    done
done
