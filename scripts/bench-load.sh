#!/usr/bin/env bash
# The load benchmark, start to finish: builds the release server and the load example,
# makes sure a Redis answers, starts the server on a free port against it (with a key
# prefix of its own), runs examples/load.rs (HTTP load, bytes stored per game, Redis's own
# ceiling with redis-benchmark), prints everything, and stops what it started.
#
# Redis comes from, in order (scripts/redis-lib.sh, as for scripts/test.sh):
#   1. REDIS_URL, if it is set and answers PING;
#   2. 127.0.0.1:6379, if it answers PING;
#   3. a throwaway redis-server started here on a free port (no persistence).
# The benchmark's keys (prefix bench:<random>:) are deleted at the end, and expire after
# GAME_IDLE_TTL_SECS=600 anyway.
#
# Arguments go to the load example, e.g. `scripts/bench-load.sh --seconds 60 --clients 32`
# (see `cargo run --release --example load -- --help`). Defaults: 64 clients, 20 s.
#
# Cluster mode: `scripts/bench-load.sh --cluster [load arguments]` runs the same load
# three times in one go: on the single Redis as above, then on a local Redis Cluster of 3
# masters with one replica each (scripts/redis-lib.sh `start_cluster`, stopped at the
# end) with REDIS_WAIT_REPLICAS=1 (the cluster default) and with 0; and on one Redis with
# one replica (both started here) with REDIS_WAIT_REPLICAS=1, which tells what waiting
# for a replica costs apart from what the cluster costs. On the cluster the
# Redis CPU per move is that of all six nodes (replicas included); Redis's ceiling and the
# bytes per game are measured on the single Redis only. Each of the three also runs
# paced at PACED_RATE moves/s (default 5000, below what each sustains here): at one rate
# the three do the same work with the same batching, so their CPU per move compares what
# each store costs; unpaced, each runs as fast as the shared cores allow, and a slower
# store also batches less.
#
# Knobs: NICE (default 5) for the build; SERVER_RUST_LOG (default warn) for the server.
# The server's rate limits are raised far above what the load asks (they stay on, so
# their cost is in the figures).
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-load.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-load.XXXXXX")
server_pid=""
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"

cluster=0
if [[ ${1:-} == --cluster ]]; then
    cluster=1
    shift
fi

stop_server() {
    if [[ -n $server_pid ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
}

cleanup() {
    local status=$?
    stop_server
    if [[ -n ${REDIS_URL:-} ]] && answers "$REDIS_URL"; then
        redis-cli -u "$REDIS_URL" --scan --pattern "${prefix}*" 2>/dev/null \
            | xargs -r -n 500 redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
    fi
    stop_cluster
    stop_pair
    stop_redis
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

# One throwaway Redis and a replica of it (`--cluster` only), as one Redis with
# REDIS_WAIT_REPLICAS=1 would run in production.
pair_dir=""
pair_url=""
pair_replica_port=""
stop_pair() {
    local pid
    if [[ -n $pair_dir ]]; then
        for pid in "$pair_dir"/*.pid; do
            [[ -f $pid ]] && kill "$(cat "$pid")" 2>/dev/null || true
        done
        sleep 0.5
        rm -rf "$pair_dir"
    fi
    pair_dir=""
}
start_pair() {
    local primary replica i
    pair_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-pair.XXXXXX")
    primary=$(free_port) || exit 1
    replica=$(free_port) || exit 1
    [[ $replica != "$primary" ]] || replica=$(free_port) || exit 1
    redis-server --port "$primary" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
        --pidfile "$pair_dir/primary.pid" --dir "$pair_dir" --logfile "$pair_dir/primary.log" >/dev/null
    redis-server --port "$replica" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
        --replicaof 127.0.0.1 "$primary" --repl-diskless-sync-delay 0 \
        --pidfile "$pair_dir/replica.pid" --dir "$pair_dir" --logfile "$pair_dir/replica.log" >/dev/null
    pair_url="redis://127.0.0.1:$primary"
    pair_replica_port=$replica
    for i in $(seq 100); do
        redis-cli -p "$primary" info replication 2>/dev/null | grep -q '^slave0:.*state=online' && return 0
        sleep 0.1
    done
    log "the replica did not come online"
    exit 1
}

command -v redis-cli >/dev/null && command -v redis-benchmark >/dev/null || {
    log "needs redis-cli and redis-benchmark (Debian: apt-get install redis-tools)"
    exit 1
}

ensure_redis

log "building (release)"
nice -n "${NICE:-5}" cargo build --release --quiet --bin domino-server --example load

# Starts the server with the store settings given as arguments (VAR=value ...), waits
# until it is ready.
start_server() {
    local port
    port=$(free_port) || exit 1
    env -u REDIS_URL -u REDIS_CLUSTER_NODES -u REDIS_WAIT_REPLICAS "$@" \
        BIND_ADDR="127.0.0.1:$port" \
        REDIS_KEY_PREFIX="$prefix" \
        GAME_IDLE_TTL_SECS=600 \
        RATE_LIMIT_PER_IP=1000000 \
        RATE_LIMIT_PER_TOKEN=1000000 \
        MAX_WAITING_PER_IP=0 \
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
    [[ $(curl -s -o /dev/null -w '%{http_code}' "$url/readyz") == 200 ]] || { log "the server is not ready"; cat "$work_dir/server.log" >&2; exit 1; }
}

warnings() {
    if grep -q '"level":"\(WARN\|ERROR\)"' "$work_dir/server.log"; then
        log "the server warned during the run:"
        grep '"level":"\(WARN\|ERROR\)"' "$work_dir/server.log" | head -n 5 >&2
    fi
}

echo "machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
echo "versions: $(rustc --version), $(redis-cli -u "$REDIS_URL" info server | grep -m1 redis_version | tr -d '\r')"
echo "command: scripts/bench-load.sh $( ((cluster)) && echo "--cluster ")$*"
status=0
(( cluster )) && echo "== one Redis"
start_server REDIS_URL="$REDIS_URL"
"$CARGO_TARGET_DIR/release/examples/load" --url "$url" --redis-url "$REDIS_URL" \
    --key-prefix "$prefix" --server-pid "$server_pid" "$@" || status=$?
if (( cluster )); then
    echo "== one Redis, paced"
    "$CARGO_TARGET_DIR/release/examples/load" --url "$url" --redis-cpu-urls "$REDIS_URL" \
        --server-pid "$server_pid" "$@" --rate "${PACED_RATE:-5000}" || status=$?
fi
warnings
stop_server

# `--cluster` only: the load unpaced, then paced, on the running server, titled $1, with
# the Redis CPU of the nodes $2 (comma-separated URLs); then stops the server.
measure() {
    local title=$1 cpu_urls=$2
    shift 2
    echo "== $title"
    "$CARGO_TARGET_DIR/release/examples/load" --url "$url" --redis-cpu-urls "$cpu_urls" \
        --server-pid "$server_pid" "$@" || status=$?
    echo "== $title, paced"
    "$CARGO_TARGET_DIR/release/examples/load" --url "$url" --redis-cpu-urls "$cpu_urls" \
        --server-pid "$server_pid" "$@" --rate "${PACED_RATE:-5000}" || status=$?
    warnings
    stop_server
}

if (( cluster )); then
    start_pair
    start_server REDIS_URL="$pair_url" REDIS_WAIT_REPLICAS=1
    measure "one Redis and its replica, REDIS_WAIT_REPLICAS=1" \
        "$pair_url,redis://127.0.0.1:$pair_replica_port" "$@"
    stop_pair

    start_cluster
    nodes=$(for port in "${cluster_ports[@]}"; do printf 'redis://127.0.0.1:%s,' "$port"; done)
    for wait in 1 0; do
        start_server REDIS_CLUSTER_NODES="$REDIS_CLUSTER_NODES" REDIS_WAIT_REPLICAS="$wait"
        measure "Redis Cluster: 3 masters, 3 replicas, REDIS_WAIT_REPLICAS=$wait" "${nodes%,}" "$@"
    done
fi
exit "$status"
