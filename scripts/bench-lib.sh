# Shared by the benches (scripts/bench-*.sh): the profile they build with, starting and
# stopping a server for one client's load, and counting its instructions under callgrind. Source it after scripts/redis-lib.sh (for `free_port`), with `log`, `work_dir`
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

# The machine a figure was measured on, as BENCHMARKS.md quotes it: cores, CPU model and
# how busy it was before the run.
machine_line() {
    echo "machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
}

wrapper=()
start_bench_server() { # binary, VAR=value...
    local bin=$1 port
    shift
    port=$(free_port) || exit 1
    # The settings given come last, so a bench may put a limit back (bench-hostile.sh
    # runs at the defaults a public server has).
    env -u REDIS_URL -u REDIS_CLUSTER_NODES -u REDIS_WAIT_REPLICAS \
        BIND_ADDR="127.0.0.1:$port" REDIS_KEY_PREFIX="$prefix" GAME_IDLE_TTL_SECS=600 \
        RATE_LIMIT_PER_IP=1000000 RATE_LIMIT_PER_TOKEN=1000000 MAX_WAITING_PER_IP=0 \
        MAX_GAMES_PER_IP=0 MAX_PLAYERS_PER_IP=0 MAX_STREAMS_PER_IP=100000 \
        MAX_CONNECTIONS_PER_IP=0 LOG_FORMAT=json RUST_LOG="${SERVER_RUST_LOG:-warn}" "$@" \
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

# Stops the server start_bench_server started, if it runs.
stop_bench_server() {
    if [[ -n ${server_pid:-} ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
}

# One count of a server's instructions (user space) under callgrind, which is how the
# benches compare builds: what else the cores run does not change it. Arguments, in
# groups separated by `--`: the command that starts the server (it must pass `wrapper`
# on, as start_bench_server does, and set `server_pid`), the warm-up load, the measured
# load (commands reading `url` and `server_pid` when they run), and the sed script that
# reads the units of work (moves, requests) from the measured load's output. Sets
# `callgrind_total` (instructions), `callgrind_units` and `callgrind_output` (that
# output); keeps the dump at `callgrind_keep` if set. Fails when nothing was measured.
callgrind_count() { # start... -- warm-up load... -- measured load... -- sed script
    local -a start=() warm=() measured=()
    local part=0 arg pattern="" dump
    for arg in "$@"; do
        if [[ $arg == -- ]]; then
            part=$((part + 1))
            continue
        fi
        case $part in
            0) start+=("$arg") ;;
            1) warm+=("$arg") ;;
            2) measured+=("$arg") ;;
            *) pattern=$arg ;;
        esac
    done
    wrapper=(valgrind --tool=callgrind --callgrind-out-file="$work_dir/callgrind.%p")
    "${start[@]}"
    wrapper=()
    "${warm[@]}" >/dev/null || true
    callgrind_control -z "$server_pid" >/dev/null 2>&1 || true
    callgrind_output=$("${measured[@]}") || true
    callgrind_control -d "$server_pid" >/dev/null 2>&1 || true
    stop_bench_server
    callgrind_units=$(sed -n "$pattern" <<<"$callgrind_output")
    dump=$(find "$work_dir" -maxdepth 1 -name 'callgrind.*.1' | head -n 1)
    callgrind_total=$(sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$dump" 2>/dev/null | head -n 1 || true)
    [[ -n ${callgrind_keep:-} && -n $dump ]] && mv "$dump" "$callgrind_keep"
    rm -f "$work_dir"/callgrind.*
    [[ -n $callgrind_units && -n $callgrind_total ]] && ((callgrind_units > 0))
}

# The sed scripts that read the units of work from the load client's output.
CALLGRIND_MOVES='s/^cpu per move (\([0-9]*\) moves applied.*/\1/p'
CALLGRIND_REQUESTS='s/^cpu per request (\([0-9]*\) sent.*/\1/p'
