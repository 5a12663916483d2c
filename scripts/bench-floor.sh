#!/usr/bin/env bash
# The floor under a move's server CPU (issue 26): what a request costs the server when it
# does nothing, measured with the same load client and connections as a move.
#   bare    examples/bare_http.rs: actix-web answering GET /healthz, no middleware;
#   memory  the server, in-memory games: GET /healthz (every middleware, no handler work),
#           then whole games (`examples/load`'s moves);
#   redis   the same against a throwaway redis-server: /healthz, then the moves.
# Each is a fresh process, 64 clients unpaced for LOAD_SECONDS (default 10) s, ROUNDS
# (default 2) times, the targets taking turns. The server's CPU is read from /proc (user
# and kernel) and divided by the requests (or the moves) it served, warm-up included.
# Last, with valgrind installed, bare and memory answer /healthz under callgrind (8
# clients, 5 s of warm-up, then 10 s counted): the instructions a request (user space),
# to set beside a move's from scripts/bench-trip.sh.
#
# Usage: scripts/bench-floor.sh   (builds the release server and examples first)
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
log() { printf 'bench-floor.sh: %s\n' "$*" >&2; }
# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

rounds=${ROUNDS:-2}
secs=${LOAD_SECONDS:-10}
work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-floor.XXXXXX")
server_pid=""
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"
cleanup() {
    local status=$?
    stop_bench_server
    stop_redis
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

log "building ($BENCH_PROFILE): the server, the load and the bare HTTP server"
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --bin domino-server --example load --example bare_http
unset REDIS_URL
start_redis

# Starts target $1 on a free port (under the command in `wrapper`, if any); sets
# `server_pid` and `url`.
start() {
    local port
    case $1 in
        bare)
            port=$(free_port) || exit 1
            url="http://127.0.0.1:$port"
            "${wrapper[@]}" "$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/bare_http" "127.0.0.1:$port" >"$work_dir/server.log" 2>&1 &
            server_pid=$!
            wait_ready "$url/healthz" "$server_pid" "$work_dir/server.log"
            ;;
        memory) start_bench_server "$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server" ;;
        redis) start_bench_server "$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server" REDIS_URL="$REDIS_URL" ;;
    esac
}
load() { "$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/load" --url "$url" --server-pid "$server_pid" --seconds "$secs" "$@" \
    | grep -E '^(probe|moves|move latency|cpu per)' || echo "(the load failed)"; }

machine_line
echo "versions: $(rustc --version), $(redis-server --version | cut -d' ' -f1-3)"
for round in $(seq "$rounds"); do
    for target in bare memory redis; do
        echo "== round $round: $target"
        start "$target"
        load --probe /healthz
        stop_bench_server
        if [[ $target != bare ]]; then
            start "$target"
            load
            stop_bench_server
        fi
    done
done
command -v callgrind_control >/dev/null || { log "no valgrind: instructions not measured"; exit 0; }
probe() { "$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/load" --url "$url" --server-pid "$server_pid" --probe /healthz "$@"; }
for target in bare memory; do
    if callgrind_count start "$target" \
        -- probe --clients 8 --seconds 5 \
        -- probe --clients 8 --seconds 10 --warmup 0 -- "$CALLGRIND_REQUESTS"; then
        echo "instructions per request, $target /healthz: $((callgrind_total / callgrind_units)) ($callgrind_units requests)"
    else
        echo "instructions per request, $target /healthz: not measured"
    fi
done
