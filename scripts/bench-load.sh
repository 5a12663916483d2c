#!/usr/bin/env bash
# The load benchmark, start to finish: builds the release server and the load example,
# makes sure a Redis answers, starts the server on a free port against it (with a key
# prefix of its own), runs examples/load.rs (HTTP load, bytes stored per game, Redis's own
# ceiling with redis-benchmark), prints everything, and stops what it started.
#
# Redis comes from, in order (the same logic as scripts/test.sh):
#   1. REDIS_URL, if it is set and answers PING;
#   2. 127.0.0.1:6379, if it answers PING;
#   3. a throwaway redis-server started here on a free port (no persistence).
# The benchmark's keys (prefix bench:<random>:) are deleted at the end, and expire after
# GAME_IDLE_TTL_SECS=600 anyway.
#
# Arguments go to the load example, e.g. `scripts/bench-load.sh --seconds 60 --clients 32`
# (see `cargo run --release --example load -- --help`). Defaults: 64 clients, 20 s.
#
# Knobs: NICE (default 5) for the build; SERVER_RUST_LOG (default warn) for the server.
# The server's rate limits are raised far above what the load asks (they stay on, so
# their cost is in the figures).
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-load.sh: %s\n' "$*" >&2; }

# host and port of a redis:// URL (credentials and database stripped)
host_port() {
    local rest=${1#*://}
    rest=${rest%%/*}
    rest=${rest##*@}
    local host=${rest%:*} port=6379
    [[ $rest == *:* ]] && port=${rest##*:}
    printf '%s %s\n' "$host" "$port"
}

answers() {
    [[ $(timeout 3 redis-cli -u "$1" ping 2>/dev/null) == PONG ]]
}

port_in_use() {
    timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null
}

free_port() {
    local port
    for _ in $(seq 50); do
        port=$(( 20000 + RANDOM % 40000 ))
        port_in_use "$port" || { echo "$port"; return 0; }
    done
    log "no free port found"
    exit 1
}

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-load.XXXXXX")
redis_pid=""
server_pid=""
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"

cleanup() {
    local status=$?
    if [[ -n $server_pid ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ -n ${REDIS_URL:-} ]] && answers "$REDIS_URL"; then
        redis-cli -u "$REDIS_URL" --scan --pattern "${prefix}*" 2>/dev/null \
            | xargs -r -n 500 redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
    fi
    if [[ -n $redis_pid ]]; then
        kill "$redis_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$redis_pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

command -v redis-cli >/dev/null && command -v redis-benchmark >/dev/null || {
    log "needs redis-cli and redis-benchmark (Debian: apt-get install redis-tools)"
    exit 1
}

if [[ -n ${REDIS_URL:-} ]] && answers "$REDIS_URL"; then
    log "using REDIS_URL"
elif answers "redis://127.0.0.1:6379"; then
    [[ -n ${REDIS_URL:-} ]] && log "REDIS_URL does not answer; falling back"
    REDIS_URL="redis://127.0.0.1:6379"
    log "using $REDIS_URL"
else
    [[ -n ${REDIS_URL:-} ]] && log "REDIS_URL does not answer; falling back"
    command -v redis-server >/dev/null || { log "no Redis answers and redis-server is missing"; exit 1; }
    port=$(free_port)
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
        --daemonize yes --pidfile "$work_dir/redis.pid" --dir "$work_dir" \
        --logfile "$work_dir/redis.log" >/dev/null
    REDIS_URL="redis://127.0.0.1:$port"
    for _ in $(seq 50); do answers "$REDIS_URL" && break; sleep 0.1; done
    answers "$REDIS_URL" || { log "redis-server did not answer"; tail -n 5 "$work_dir/redis.log" >&2; exit 1; }
    redis_pid=$(cat "$work_dir/redis.pid")
    log "started a throwaway redis-server at $REDIS_URL"
fi
export REDIS_URL

log "building (release)"
nice -n "${NICE:-5}" cargo build --release --quiet --bin domino-server --example load

port=$(free_port)
BIND_ADDR="127.0.0.1:$port" \
    REDIS_KEY_PREFIX="$prefix" \
    GAME_IDLE_TTL_SECS=600 \
    RATE_LIMIT_PER_IP=1000000 \
    RATE_LIMIT_PER_TOKEN=1000000 \
    LOG_FORMAT=json \
    RUST_LOG="${SERVER_RUST_LOG:-warn}" \
    "$CARGO_TARGET_DIR/release/domino-server" >"$work_dir/server.log" 2>&1 &
server_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 100); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' "$url/readyz" 2>/dev/null) == 200 ]] && break
    kill -0 "$server_pid" 2>/dev/null || { log "the server stopped:"; cat "$work_dir/server.log" >&2; exit 1; }
    sleep 0.1
done
[[ $(curl -s -o /dev/null -w '%{http_code}' "$url/readyz") == 200 ]] || { log "the server is not ready"; exit 1; }

echo "machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
echo "versions: $(rustc --version), $(redis-cli -u "$REDIS_URL" info server | grep -m1 redis_version | tr -d '\r')"
echo "command: scripts/bench-load.sh $*"
status=0
"$CARGO_TARGET_DIR/release/examples/load" --url "$url" --redis-url "$REDIS_URL" \
    --key-prefix "$prefix" --server-pid "$server_pid" "$@" || status=$?
if grep -q '"level":"\(WARN\|ERROR\)"' "$work_dir/server.log"; then
    log "the server warned during the run:"
    grep '"level":"\(WARN\|ERROR\)"' "$work_dir/server.log" | head -n 5 >&2
fi
exit "$status"
