# Shared by the benches (scripts/bench-*.sh): the profile they build with, and starting a
# server for one client's load. Source it after scripts/redis-lib.sh (for `free_port`), with `log`, `work_dir`
# and `prefix` (the bench's Redis key prefix) defined.

# Starts server binary $1 on a free loopback port with the store settings given after it
# (VAR=value ...; none: games in memory), under the command in the array `wrapper` if
# any (valgrind), logging to `server_log` (default $work_dir/server.log). Every limit
# meant for many clients is raised out of the way of one load client. Sets `server_pid`
# and `url`; returns once /readyz answers 200, or exits with the server's log.
# The benches build with the `profiling` profile (Cargo.toml: thin LTO, as releases were
# built before the release profile was chosen for its build time); BENCH_PROFILE=release
# measures what `cargo run --release` builds.
BENCH_PROFILE=${BENCH_PROFILE:-profiling}

wrapper=()
start_bench_server() { # binary, VAR=value...
    local bin=$1 port
    shift
    port=$(free_port) || exit 1
    env -u REDIS_URL -u REDIS_CLUSTER_NODES -u REDIS_WAIT_REPLICAS "$@" \
        BIND_ADDR="127.0.0.1:$port" REDIS_KEY_PREFIX="$prefix" GAME_IDLE_TTL_SECS=600 \
        RATE_LIMIT_PER_IP=1000000 RATE_LIMIT_PER_TOKEN=1000000 MAX_WAITING_PER_IP=0 \
        MAX_GAMES_PER_IP=0 MAX_PLAYERS_PER_IP=0 MAX_STREAMS_PER_IP=100000 \
        MAX_CONNECTIONS_PER_IP=0 LOG_FORMAT=json RUST_LOG="${SERVER_RUST_LOG:-warn}" \
        "${wrapper[@]}" "$bin" >"${server_log:-$work_dir/server.log}" 2>&1 &
    server_pid=$!
    url="http://127.0.0.1:$port"
    wait_ready "$url/readyz" "$server_pid" "${server_log:-$work_dir/server.log}"
}

# Waits until $1 answers 200; exits with log $3 if process $2 stops or a minute passes.
wait_ready() { # url, pid, log file
    for _ in $(seq 600); do
        [[ $(curl -s -o /dev/null -w '%{http_code}' "$1" 2>/dev/null) == 200 ]] && return 0
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    log "the server did not start ($1):"
    cat "$3" >&2
    exit 1
}
