#!/usr/bin/env bash
# What a move costs, server builds side by side (issue 26): each NAME=path names a release
# `domino-server` binary (e.g. one built from the commit before a change, and one after);
# they take turns, round after round, on the same stores, with the same load binary
# (this tree's `examples/load`, built here). Stores, all started here on free ports and
# stopped at the end:
#   redis   one throwaway redis-server;
#   cluster a Redis Cluster of 3 masters with one replica each (scripts/redis-lib.sh),
#           REDIS_WAIT_REPLICAS=0 (as `--cluster` store 5 of scripts/bench-load.sh);
#   delayed the same redis-server behind examples/delay_proxy.rs, which holds every byte
#           DELAY_US (default 150) each way: 0.3 ms more a round trip, Redis across a network.
# Per round, store and build (a fresh server each run, started as scripts/bench-load.sh
# starts it):
#   1. unpaced, 64 clients, LOAD_SECONDS (default 20) s: moves/s, latency, CPU a move;
#   2. paced at PACED_RATE (default 5000) moves/s: the server's CPU a move at equal work;
#   3. (delayed) 8 clients paced at 1000 moves/s: a move's latency when nothing queues;
#   4. (redis, cluster) paced at 1000 moves/s for 8 s with --count-calls: the commands
#      clients send Redis a move (MONITOR on the masters);
#   5. (redis, cluster, with valgrind) under callgrind at 100 moves/s, 8 clients, 8 s of
#      warm-up then 20 s counted: instructions a move (user space), as bench-load.sh does;
#      the dumps are kept in $OUT (default /tmp/bench-trip) for callgrind_annotate.
# Then, once per build, the player's view (--follow) on memory, redis and cluster: each seat
# reads its own event stream, and a move counts when the opponent's stream delivered it.
#
# Usage: scripts/bench-trip.sh before=/path/to/old/domino-server after=target/profiling/domino-server
# Knobs: ROUNDS (default 2), LOAD_SECONDS, PACED_RATE, DELAY_US, OUT, SKIP_FOLLOW=1, SKIP_CALLGRIND=1,
# STORES (default "redis cluster delayed": the stores of the rounds, e.g. STORES=redis for
# two builds on one Redis alone; a store not named is not started).
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
log() { printf 'bench-trip.sh: %s\n' "$*" >&2; }
# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

(( $# > 0 )) || { log "usage: $0 NAME=/path/to/domino-server ..."; exit 1; }
names=() bins=()
for arg in "$@"; do
    names+=("${arg%%=*}")
    bins+=("${arg#*=}")
    [[ -x ${arg#*=} ]] || { log "${arg#*=} is not an executable"; exit 1; }
done
rounds=${ROUNDS:-2}
secs=${LOAD_SECONDS:-20}
out=${OUT:-/tmp/bench-trip}
mkdir -p "$out"
work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-trip.XXXXXX")
server_pid="" proxy_pid=""
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"

cleanup() {
    local status=$?
    stop_bench_server
    [[ -n $proxy_pid ]] && kill "$proxy_pid" 2>/dev/null
    stop_cluster
    stop_redis
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

read -ra stores <<<"${STORES:-redis cluster delayed}"
uses() { [[ " ${stores[*]} " == *" $1 "* ]] || [[ $1 != delayed && -z ${SKIP_FOLLOW:-} ]]; }
log "building ($BENCH_PROFILE): the load and the delaying proxy"
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --example load \
    $(uses delayed && echo --example delay_proxy)

unset REDIS_URL
start_redis
nodes="" delayed_url=""
if uses cluster; then
    start_cluster
    nodes=$(for port in "${cluster_ports[@]}"; do printf 'redis://127.0.0.1:%s,' "$port"; done)
    nodes=${nodes%,}
fi
if uses delayed; then
    "$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/delay_proxy" --to "$(host_port "$REDIS_URL" | tr " " ":")" \
        --delay-us "${DELAY_US:-150}" >"$work_dir/proxy.out" &
    proxy_pid=$!
    for _ in $(seq 50); do grep -q listening "$work_dir/proxy.out" && break; sleep 0.1; done
    delayed_url="redis://$(sed -n 's/^listening on //p' "$work_dir/proxy.out")"
fi

declare -A settings=(
    [memory]=""
    [redis]="REDIS_URL=$REDIS_URL"
    [cluster]="REDIS_CLUSTER_NODES=${REDIS_CLUSTER_NODES:-} REDIS_WAIT_REPLICAS=0"
    [delayed]="REDIS_URL=$delayed_url"
)
declare -A cpu_urls=([memory]="" [redis]="$REDIS_URL" [cluster]="$nodes" [delayed]="$REDIS_URL")

# Starts build $1's server on store $2 (under the command in `wrapper`, if any).
start_server() {
    # shellcheck disable=SC2086 # the settings are VAR=value words
    start_bench_server "$1" ${settings[$2]}
}
load() {
    local store=$1
    shift
    local urls=()
    [[ -n ${cpu_urls[$store]} ]] && urls=(--redis-cpu-urls "${cpu_urls[$store]}")
    "$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/load" --url "$url" --server-pid "$server_pid" "${urls[@]}" "$@" \
        || echo "(the load failed: $?)"
}
# Runs build $1 on store $2 with load arguments $3...: prints the load's lines.
run() {
    local bin=$1 store=$2
    shift 2
    start_server "$bin" "$store"
    load "$store" "$@" | grep -v '^  ' || true
    grep -q '"level":"\(WARN\|ERROR\)"' "$work_dir/server.log" \
        && { echo "server warnings:"; grep '"level":"\(WARN\|ERROR\)"' "$work_dir/server.log" | head -n 3; }
    stop_bench_server
}
instructions() {
    local bin=$1 store=$2 name=$3 round=$4
    local callgrind_keep="$out/callgrind.$name.$store.$round"
    if callgrind_count start_server "$bin" "$store" \
        -- load "$store" --clients 8 --seconds 8 --rate 100 \
        -- load "$store" --clients 8 --seconds 20 --warmup 0 --rate 100 -- "$CALLGRIND_MOVES"; then
        echo "instructions per move: $((callgrind_total / callgrind_units)) ($callgrind_units moves; $callgrind_keep)"
    else
        echo "instructions per move: not measured"
    fi
}

machine_line
echo "versions: $(rustc --version), $(redis-server --version | cut -d' ' -f1-3), $(valgrind --version 2>/dev/null || echo 'no valgrind')"
echo "command: STORES=\"${stores[*]}\" ROUNDS=$rounds LOAD_SECONDS=$secs PACED_RATE=${PACED_RATE:-5000} DELAY_US=${DELAY_US:-150} scripts/bench-trip.sh $*"
# A PING's round trip, one at a time: 1 / the rate of one connection.
rtt() { redis-benchmark -u "$1" -c 1 -n 4000 -t ping --csv 2>/dev/null | awk -F'"' 'NR == 2 { printf "%.3f ms", 1000 / $4 }'; }
echo "a PING's round trip (redis-benchmark -c 1 -n 4000 -t ping): direct $(rtt "$REDIS_URL")$(uses delayed && echo ", through the delaying proxy $(rtt "$delayed_url")")"
for round in $(seq "$rounds"); do
    for store in "${stores[@]}"; do
        # The builds take turns; the first of each round rotates.
        for i in "${!names[@]}"; do
            j=$(( (i + round - 1) % ${#names[@]} ))
            name=${names[$j]} bin=${bins[$j]}
            echo "== round $round, $store, $name: unpaced"
            run "$bin" "$store" --seconds "$secs"
            echo "== round $round, $store, $name: paced at ${PACED_RATE:-5000} moves/s"
            run "$bin" "$store" --seconds "$secs" --rate "${PACED_RATE:-5000}"
            if [[ $store == delayed ]]; then
                echo "== round $round, $store, $name: 8 clients paced at 1000 moves/s"
                run "$bin" "$store" --seconds "$secs" --clients 8 --rate 1000
                continue
            fi
            echo "== round $round, $store, $name: redis calls, paced at 1000 moves/s"
            run "$bin" "$store" --seconds 8 --rate 1000 --count-calls
            if [[ -z ${SKIP_CALLGRIND:-} ]] && command -v valgrind >/dev/null; then
                echo "== round $round, $store, $name: callgrind at 100 moves/s"
                instructions "$bin" "$store" "$name" "$round"
            fi
        done
    done
done
if [[ -z ${SKIP_FOLLOW:-} ]]; then
    for store in memory redis cluster; do
        for i in "${!names[@]}"; do
            echo "== following, $store, ${names[$i]}: unpaced"
            run "${bins[$i]}" "$store" --seconds "$secs" --follow
            echo "== following, $store, ${names[$i]}: paced at 2000 moves/s"
            run "${bins[$i]}" "$store" --seconds "$secs" --follow --rate 2000
        done
    done
fi
