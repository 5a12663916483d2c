#!/usr/bin/env bash
# The project's one test command: makes sure a Redis is reachable, then runs every test.
#
# The Redis store is tested against a real Redis (the same contract tests as the memory
# store), so a Redis must exist. Where it comes from, in order:
#   1. REDIS_URL, if it is set and answers PING;
#   2. 127.0.0.1:6379, if it answers PING;
#   3. a throwaway redis-server started here on a free port (no persistence), stopped on
#      exit; Debian's redis-server package is installed with apt-get if the binary is
#      missing.
# Arguments are passed to `cargo test --all-targets` (e.g. `scripts/test.sh redis::`);
# with none, schemathesis then runs against the OpenAPI document (scripts/schemathesis.sh).
#
# Knob (for testing this script itself): DOMINO_TEST_REDIS_PORT_PROBE=<port> probes that
# port instead of 6379 in step 2; point it at a closed port to force step 3.
set -euo pipefail

cd "$(dirname "$0")/.."

log() { printf 'test.sh: %s\n' "$*" >&2; }

# host and port of a redis:// URL (credentials and database stripped)
host_port() {
    local rest=${1#*://}
    rest=${rest%%/*}
    rest=${rest##*@}
    local host=${rest%:*} port=6379
    [[ $rest == *:* ]] && port=${rest##*:}
    printf '%s %s\n' "$host" "$port"
}

# Does the Redis at this URL answer PING?
answers() {
    local url=$1
    if command -v redis-cli >/dev/null 2>&1; then
        [[ $(timeout 3 redis-cli -u "$url" ping 2>/dev/null) == PONG ]]
    else
        # No redis-cli: speak the protocol by hand (no AUTH, so only for open servers).
        local host port
        read -r host port < <(host_port "$url")
        timeout 3 bash -c '
            exec 3<>"/dev/tcp/$0/$1" || exit 1
            printf "PING\r\n" >&3
            IFS= read -r -t 2 line <&3
            [[ $line == +PONG* ]]' "$host" "$port" 2>/dev/null
    fi
}

port_in_use() {
    timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null
}

install_redis() {
    log "redis-server is missing; installing Debian's redis-server package"
    local sudo=()
    if [[ $(id -u) != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || { log "need root or sudo to install redis-server"; exit 1; }
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
}

redis_dir=""
stop_redis() {
    if [[ -n $redis_dir && -f $redis_dir/redis.pid ]]; then
        local pid i
        pid=$(cat "$redis_dir/redis.pid")
        kill "$pid" 2>/dev/null || true
        for i in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    [[ -n $redis_dir ]] && rm -rf "$redis_dir"
    return 0
}

start_redis() {
    command -v redis-server >/dev/null 2>&1 || install_redis
    redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-test-redis.XXXXXX")
    trap stop_redis EXIT
    local attempt port
    for attempt in 1 2 3 4 5; do
        port=$(( 20000 + RANDOM % 40000 ))
        port_in_use "$port" && continue
        redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
            --daemonize yes --pidfile "$redis_dir/redis.pid" --dir "$redis_dir" \
            --logfile "$redis_dir/redis.log" >/dev/null
        local url="redis://127.0.0.1:$port"
        local i
        for i in $(seq 50); do
            if answers "$url"; then
                REDIS_URL=$url
                log "started a throwaway redis-server at $REDIS_URL (attempt $attempt)"
                return 0
            fi
            sleep 0.1
        done
        log "redis-server on port $port did not answer:"
        tail -n 5 "$redis_dir/redis.log" >&2 || true
        stop_redis
        redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-test-redis.XXXXXX")
    done
    log "could not start redis-server"
    exit 1
}

probe_port=${DOMINO_TEST_REDIS_PORT_PROBE:-6379}
if [[ -n ${REDIS_URL:-} ]] && answers "$REDIS_URL"; then
    log "using REDIS_URL"
elif answers "redis://127.0.0.1:$probe_port"; then
    [[ -n ${REDIS_URL:-} ]] && log "REDIS_URL does not answer; falling back"
    REDIS_URL="redis://127.0.0.1:$probe_port"
    log "using $REDIS_URL"
else
    [[ -n ${REDIS_URL:-} ]] && log "REDIS_URL does not answer; falling back"
    start_redis
fi
export REDIS_URL

cargo test --all-targets "$@"
cargo test --doc
# Generated requests against the committed OpenAPI document (PyPI's schemathesis, in a
# venv under target/): no 5xx, no answer outside the document. Skipped only when a
# filter was given, to run a subset of the cargo tests.
if [[ $# == 0 ]]; then
    scripts/schemathesis.sh
fi
