#!/usr/bin/env bash
# What a webhook seat costs the server beside a pulled one (issue 54; examples/webhooks.rs):
# 64 players with webhooks on one local bot server play each other in challenge games for
# WEBHOOK_SECS (20) seconds, then 64 players pulling do the same; moves/s, server CPU a move
# in each, their ratio (goal: at most 1.5x) and the calls' latency. One server process,
# games in memory (STORE=redis: on a Redis, found or started as the tests do). Arguments go
# to the example (`cargo run --release --example webhooks -- --help`).
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-webhook.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-webhook.XXXXXX")
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
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --bin domino-server --example webhooks

store=()
if [[ ${STORE:-memory} == redis ]]; then
    ensure_redis
    store=(REDIS_URL="$REDIS_URL")
fi
# The bot server listens on 127.0.0.1; the caps the other benches do not raise are lifted
# too, since one address makes every player, challenge and game (thousands of them).
start_bench_server "$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server" "${store[@]}" \
    WEBHOOK_ALLOW_PRIVATE=true MAX_KEPT_GAMES_PER_IP=0 MAX_CHALLENGES_TO_PLAYER=0
machine_line
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
echo "store: ${STORE:-memory}; profile: $BENCH_PROFILE; $(rustc --version)"
"$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/webhooks" --url "$url" --server-pid "$server_pid" \
    --secs "${WEBHOOK_SECS:-20}" "$@"
