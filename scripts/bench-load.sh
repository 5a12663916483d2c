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
# Cluster mode: `scripts/bench-load.sh --cluster [load arguments]` compares five stores
# in one go, all started here (and stopped at the end) before the first load:
#   1. the single Redis above;
#   2. one Redis in cluster mode holding every slot, through the cluster client
#      (REDIS_CLUSTER_NODES): the same kind of Redis as 1, so the two differ only in the
#      client, which tells what the redis crate's cluster connection itself costs;
#   3. one Redis with one replica, REDIS_WAIT_REPLICAS=1: what waiting for a replica
#      costs apart from what the cluster costs;
#   4. a local Redis Cluster of 3 masters with one replica each (scripts/redis-lib.sh
#      `start_cluster`), REDIS_WAIT_REPLICAS=1 (the cluster default);
#   5. the same cluster, REDIS_WAIT_REPLICAS=0.
# Each runs once unpaced (as fast as the shared cores allow: a slower store also batches
# less), then ROUNDS times (default 3) paced at PACED_RATE moves/s (default 5000, below
# what each sustains here), the stores taking turns within each round: at one rate they
# do the same work with the same batching, so their server CPU per move compares what
# each store costs, and taking turns spreads the machine's drift over all of them. A
# summary ends the run: each store's paced server CPU per move, round by round (and the
# mean of its part in the kernel), and its ratio to the single Redis in the same round. Redis CPU per move counts every node of a
# store, replicas included; Redis's ceiling and the bytes per game are measured on the
# single Redis only. Last, with valgrind installed, each store's server runs under
# callgrind at 100 moves/s (8 clients, 20 s after 8 s of warm-up): the instructions it
# executes per move, which unlike CPU time do not depend on what else the two cores run
# or on how requests happen to share wake-ups (user space only: not the kernel's work).
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
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-load.XXXXXX")
server_pid=""
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"

cluster=0
if [[ ${1:-} == --cluster ]]; then
    cluster=1
    shift
fi

cleanup() {
    local status=$?
    stop_bench_server
    if [[ -n ${REDIS_URL:-} ]] && answers "$REDIS_URL"; then
        redis-cli -u "$REDIS_URL" --scan --pattern "${prefix}*" 2>/dev/null \
            | xargs -r -n 500 redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
    fi
    stop_cluster
    stop_servers_in "$pair_dir"
    stop_servers_in "$one_dir"
    stop_redis
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

# Stops the redis-servers whose pid files are in directory $1 (if any), and removes it.
stop_servers_in() {
    local pid
    [[ -n $1 ]] || return 0
    for pid in "$1"/*.pid; do
        [[ -f $pid ]] && kill "$(cat "$pid")" 2>/dev/null || true
    done
    sleep 0.5
    rm -rf "$1"
}

# Runs the command given every 0.1 s until it succeeds, 100 times at most; else logs $1
# and stops the benchmark.
wait_until() {
    local failure=$1 i
    shift
    for i in $(seq 100); do
        "$@" && return 0
        sleep 0.1
    done
    log "$failure"
    exit 1
}
replica_online() { redis-cli -p "$1" info replication 2>/dev/null | grep -q '^slave0:.*state=online'; }
cluster_ok() { redis-cli -p "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }

# One throwaway Redis and a replica of it (`--cluster` only), as one Redis with
# REDIS_WAIT_REPLICAS=1 would run in production.
pair_dir=""
pair_url=""
pair_replica_port=""
start_pair() {
    local primary replica
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
    wait_until "the replica did not come online" replica_online "$primary"
}

# One throwaway Redis in cluster mode that holds every slot (`--cluster` only): a cluster
# of one master, for the cluster client on the same kind of Redis as the single one.
one_dir=""
one_url=""
start_one_master() {
    local port
    one_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-one.XXXXXX")
    port=$(free_port) || exit 1
    redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file "$one_dir/nodes.conf" --save "" --appendonly no --daemonize yes \
        --pidfile "$one_dir/redis.pid" --dir "$one_dir" --logfile "$one_dir/redis.log" >/dev/null
    one_url="redis://127.0.0.1:$port"
    wait_until "the one-master cluster's node did not start" answers "$one_url"
    redis-cli -p "$port" cluster addslotsrange 0 16383 >/dev/null
    wait_until "the one-master cluster did not become ok" cluster_ok "$port"
}

command -v redis-cli >/dev/null && command -v redis-benchmark >/dev/null || {
    log "needs redis-cli and redis-benchmark (Debian: apt-get install redis-tools)"
    exit 1
}

ensure_redis

log "building ($BENCH_PROFILE)"
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --bin domino-server --example load

# Starts the server with the store settings given as arguments (VAR=value ...).
start_server() { start_bench_server "$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server" "$@"; }

warnings() {
    if grep -q '"level":"\(WARN\|ERROR\)"' "$work_dir/server.log"; then
        log "the server warned during the run:"
        grep '"level":"\(WARN\|ERROR\)"' "$work_dir/server.log" | head -n 5 >&2
    fi
}

machine_line
echo "versions: $(rustc --version), $(redis-cli -u "$REDIS_URL" info server | grep -m1 redis_version | tr -d '\r')"
echo "command: $( ((cluster)) && echo "ROUNDS=${ROUNDS:-3} PACED_RATE=${PACED_RATE:-5000} ")scripts/bench-load.sh $( ((cluster)) && echo "--cluster ")$*"
status=0
load() { "$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/load" --url "$url" --server-pid "$server_pid" "$@"; }
if (( ! cluster )); then
    start_server REDIS_URL="$REDIS_URL"
    load --redis-url "$REDIS_URL" --key-prefix "$prefix" "$@" || status=$?
    warnings
    exit "$status"
fi

# --cluster: the five stores (see the top of this file), by number: the server's store
# settings, and the nodes whose Redis CPU counts.
start_one_master
start_pair
start_cluster
nodes=$(for port in "${cluster_ports[@]}"; do printf 'redis://127.0.0.1:%s,' "$port"; done)
nodes=${nodes%,}
titles=(
    "one Redis"
    "one Redis in cluster mode, through the cluster client"
    "one Redis and its replica, REDIS_WAIT_REPLICAS=1"
    "Redis Cluster: 3 masters, 3 replicas, REDIS_WAIT_REPLICAS=1"
    "Redis Cluster: 3 masters, 3 replicas, REDIS_WAIT_REPLICAS=0"
)
settings=(
    "REDIS_URL=$REDIS_URL"
    "REDIS_CLUSTER_NODES=$one_url REDIS_WAIT_REPLICAS=0"
    "REDIS_URL=$pair_url REDIS_WAIT_REPLICAS=1"
    "REDIS_CLUSTER_NODES=$REDIS_CLUSTER_NODES REDIS_WAIT_REPLICAS=1"
    "REDIS_CLUSTER_NODES=$REDIS_CLUSTER_NODES REDIS_WAIT_REPLICAS=0"
)
cpu_urls=("$REDIS_URL" "$one_url" "$pair_url,redis://127.0.0.1:$pair_replica_port" "$nodes" "$nodes")

# Runs the load on store $1 (further arguments go to the load), prints what it printed
# and keeps the server CPU per move and its part in the kernel in $work_dir/cpu.
run_on() {
    local store=$1 out
    shift
    # shellcheck disable=SC2086 # the settings are VAR=value words
    start_server ${settings[$store]}
    out=$(load --redis-cpu-urls "${cpu_urls[$store]}" "$@") || status=$?
    printf '%s\n' "$out"
    sed -n 's/^cpu per move.* server \([0-9.]*\) us (kernel \([0-9.]*\)).*/\1 \2/p' <<<"$out" >"$work_dir/cpu"
    warnings
    stop_bench_server
}

echo "== ${titles[0]}, unpaced, with Redis's ceiling and the bytes per game"
run_on 0 --redis-url "$REDIS_URL" --key-prefix "$prefix" "$@"
for store in "${!titles[@]}"; do
    (( store == 0 )) && continue
    echo "== ${titles[$store]}, unpaced"
    run_on "$store" "$@"
done
rounds=${ROUNDS:-3}
: >"$work_dir/paced"
for round in $(seq "$rounds"); do
    for store in "${!titles[@]}"; do
        echo "== round $round of $rounds: ${titles[$store]}, paced"
        run_on "$store" "$@" --rate "${PACED_RATE:-5000}"
        printf '%s %s %s\n' "$round" "$store" "$(cat "$work_dir/cpu")" >>"$work_dir/paced"
    done
done
echo "== summary: server CPU per move paced at ${PACED_RATE:-5000} moves/s, round by round, and against one Redis in the same round"
for store in "${!titles[@]}"; do
    awk -v store="$store" -v title="${titles[$store]}" '
        $2 == 0 { base[$1] = $3 }
        $2 == store { us[$1] = $3; kernel += $4; n++ }
        END {
            line = ""; sum = 0; rsum = 0; rmin = 1e9; rmax = 0
            for (r = 1; r <= n; r++) {
                line = line sprintf(" %.1f", us[r]); sum += us[r]
                if (base[r] == 0 || us[r] == 0) { print title ": a run of round " r " measured nothing"; exit 1 }
                ratio = us[r] / base[r]; rsum += ratio
                if (ratio < rmin) rmin = ratio; if (ratio > rmax) rmax = ratio
            }
            printf "%s: us%s (mean %.1f, of which kernel %.1f); against one Redis x%.3f (%.2f to %.2f)\n", title, line, sum / n, kernel / n, rsum / n, rmin, rmax
        }' "$work_dir/paced" || status=1
done

# Instructions per move of store $1's server, under callgrind (see the top of this file).
instructions_on() {
    local store=$1
    # shellcheck disable=SC2086 # the settings are VAR=value words
    if callgrind_count start_server ${settings[$store]} \
        -- load --clients 8 --seconds 8 --rate 100 \
        -- load --clients 8 --seconds 20 --warmup 0 --rate 100 -- "$CALLGRIND_MOVES"; then
        echo "${titles[$store]}: $((callgrind_total / callgrind_units)) instructions per move ($callgrind_units moves)"
    else
        echo "${titles[$store]}: not measured"
        status=1
    fi
}
if command -v valgrind >/dev/null && command -v callgrind_control >/dev/null; then
    echo "== instructions per move (callgrind, user space, 100 moves/s)"
    for store in "${!titles[@]}"; do
        instructions_on "$store"
    done
else
    log "valgrind is not installed: no instruction counts (Debian: apt-get install valgrind)"
fi
exit "$status"
