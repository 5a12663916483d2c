#!/usr/bin/env bash
# What followers cost the server (examples/followers.rs): a duplicate Swiss of 64 built-in
# levels followed by 128 event streams from 4 loopback addresses, then the same Swiss
# unfollowed; a game watched by as many spectators, then unwatched. One server process,
# games in memory (STORE=redis: on a Redis, found or started as the tests do). Arguments go
# to the example (`cargo run --release --example followers -- --help`).
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-followers.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-followers.XXXXXX")
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"
cleanup() {
    local status=$?
    stop_bench_server
    if [[ -n ${REDIS_URL:-} ]] && answers "$REDIS_URL"; then
        redis-cli -u "$REDIS_URL" --scan --pattern "${prefix}*" 2>/dev/null \
            | xargs -r -n 500 redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
    fi
    stop_redis
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

log "building ($BENCH_PROFILE)"
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --bin domino-server --example followers

store=()
if [[ ${STORE:-memory} == redis ]]; then
    ensure_redis
    store=(REDIS_URL="$REDIS_URL")
fi
start_bench_server "$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server" "${store[@]}"
machine_line
echo "store: ${STORE:-memory}; $(rustc --version)"
"$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/followers" --url "$url" --server-pid "$server_pid" "$@"
