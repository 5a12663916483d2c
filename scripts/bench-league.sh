#!/usr/bin/env bash
# The league benchmark (issue 55; examples/league.rs): a league of the four built-in
# levels plus 3 webhook copies of each (one local bot server in the example that plays
# each copy as its level would, from the views the server POSTs) runs for LEAGUE_SECS
# (default 600) seconds on SERVERS (default 2) server processes sharing one Redis (found or
# started as the tests do, under a key prefix of its own, deleted at the end). Prints
# matches an hour, the servers' CPU a match (both processes, /proc/<pid>/stat), and the
# table at the end with its checks: master above expert above greedy above random with
# intervals (rating ± 2 deviations) apart, each copy within its original's interval.
#
# The servers: webhooks on loopback allowed (WEBHOOK_ALLOW_PRIVATE=true), the per-address
# caps lifted (every player comes from one address), LEAGUE_MATCHES_PER_HOUR out of the
# way, the master searching a fixed BOT_MASTER_WORK (default 1,000,000 moves, the arena's)
# as its copies do, so the level and its copies are the same player whatever else the
# cores run, and WEBHOOK_TIMEOUT_MS (default 10000) long enough for a master copy's
# decision on two busy cores. Arguments go to the example (`cargo run --release --example
# league -- --help`), e.g. `--preset block --deals-per-match 2`.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-league.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-league.XXXXXX")
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"
pids=()
args=()
master_work=${BOT_MASTER_WORK:-1000000}

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
    if [[ -n ${KEEP_LOGS:-} ]]; then
        log "server logs kept in $work_dir"
    else
        rm -rf "$work_dir"
    fi
    exit "$status"
}
trap cleanup EXIT

ensure_redis

log "building ($BENCH_PROFILE)"
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --bin domino-server --example league

for i in $(seq "${SERVERS:-2}"); do
    server_log="$work_dir/server-$i.log"
    start_bench_server "$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server" REDIS_URL="$REDIS_URL" \
        WEBHOOK_ALLOW_PRIVATE=true MAX_KEPT_GAMES_PER_IP=0 MAX_CHALLENGES_TO_PLAYER=0 \
        LEAGUE_MATCHES_PER_HOUR="${LEAGUE_MATCHES_PER_HOUR:-100000}" \
        BOT_MASTER_WORK="$master_work" WEBHOOK_TIMEOUT_MS="${WEBHOOK_TIMEOUT_MS:-10000}"
    pids+=("$server_pid")
    args+=(--url "$url" --server-pid "$server_pid")
done

machine_line
echo "versions: $(rustc --version), $(redis-server --version | cut -d' ' -f1-3); profile $BENCH_PROFILE; commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo '+changes')"
"$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/league" "${args[@]}" \
    --secs "${LEAGUE_SECS:-600}" --master-work "$master_work" "$@"
