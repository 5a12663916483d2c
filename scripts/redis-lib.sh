# Finding or starting a Redis, shared by scripts/test.sh and scripts/bench-load.sh.
# Source it, then call `ensure_redis`; call `stop_redis` when done (from an EXIT trap):
# it stops the redis-server this started, if any, and does nothing otherwise.
#
# `ensure_redis` exports REDIS_URL, taken from, in order:
#   1. REDIS_URL, if it is set and answers PING;
#   2. 127.0.0.1:$REDIS_PROBE_PORT (default 6379), if it answers PING;
#   3. a throwaway redis-server started on a free port (no persistence); Debian's
#      redis-server package is installed with apt-get if the binary is missing.
# Messages go to stderr through `log`, which the sourcing script defines.

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

# A port nothing listens on, below the kernel's range of ephemeral ports by 10,000 or
# more: a port in that range may be the local end of some outgoing connection (the tests
# open many), which a listener then cannot bind, and a cluster node also binds its port
# + 10000 for the cluster bus.
free_port() {
    local port low
    low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    (( low > 20000 )) || low=32768
    for _ in $(seq 50); do
        port=$(( 10000 + RANDOM % (low - 20000) ))
        port_in_use "$port" || { echo "$port"; return 0; }
    done
    log "no free port found"
    return 1
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
        local pid
        pid=$(cat "$redis_dir/redis.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    [[ -n $redis_dir ]] && rm -rf "$redis_dir"
    redis_dir=""
    return 0
}

start_redis() {
    command -v redis-server >/dev/null 2>&1 || install_redis
    local attempt port url
    for attempt in 1 2 3 4 5; do
        redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-redis.XXXXXX")
        port=$(free_port) || exit 1
        redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
            --daemonize yes --pidfile "$redis_dir/redis.pid" --dir "$redis_dir" \
            --logfile "$redis_dir/redis.log" >/dev/null
        url="redis://127.0.0.1:$port"
        for _ in $(seq 50); do
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
    done
    log "could not start redis-server"
    exit 1
}

ensure_redis() {
    local probe_port=${REDIS_PROBE_PORT:-6379}
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
}

# ----- a local Redis Cluster -----
# `start_cluster [spares]` starts 3 masters with one replica each (plain `redis-server
# --cluster-enabled yes` processes on free ports, no persistence, a short
# cluster-node-timeout so a failover takes about a second), plus `spares` more replicas
# (default 0; redis-cli gives them to some masters), joins them with `redis-cli --cluster
# create`, waits until every node says `cluster_state:ok`, and exports
# REDIS_CLUSTER_NODES (the three masters' URLs). A spare is what Redis's replica
# migration moves to a master left with none (its own replica took over from it), about
# 5 s after. `stop_cluster` stops them all and
# removes their directory; call it from an EXIT trap. Needs redis-server and redis-cli 7.
cluster_dir=""
cluster_ports=()

stop_cluster() {
    local port pid
    if [[ -n $cluster_dir ]]; then
        for port in "${cluster_ports[@]}"; do
            [[ -f $cluster_dir/$port/redis.pid ]] || continue
            pid=$(cat "$cluster_dir/$port/redis.pid")
            kill "$pid" 2>/dev/null || true
        done
        for port in "${cluster_ports[@]}"; do
            [[ -f $cluster_dir/$port/redis.pid ]] || continue
            pid=$(cat "$cluster_dir/$port/redis.pid")
            for _ in $(seq 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
        done
        rm -rf "$cluster_dir"
    fi
    cluster_dir=""
    cluster_ports=()
    unset REDIS_CLUSTER_NODES
    return 0
}

# Starts (or restarts, with its old nodes file: it rejoins the cluster) the node on $1.
start_cluster_node() {
    local port=$1 dir=$cluster_dir/$1
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file "$dir/nodes.conf" --cluster-node-timeout "${CLUSTER_NODE_TIMEOUT_MS:-1000}" \
        --repl-diskless-sync-delay 0 --save "" --appendonly no --daemonize yes \
        --pidfile "$dir/redis.pid" --dir "$dir" --logfile "$dir/redis.log" >/dev/null
}

start_cluster() {
    command -v redis-server >/dev/null 2>&1 || install_redis
    local port i ok spares=${1:-0}
    cluster_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-cluster.XXXXXX")
    cluster_ports=()
    while (( ${#cluster_ports[@]} < 6 + spares )); do
        port=$(free_port) || exit 1
        [[ " ${cluster_ports[*]} " == *" $port "* ]] && continue
        # The cluster bus listens on port + 10000: it must be free as well.
        (( port + 10000 < 65536 )) && ! port_in_use $(( port + 10000 )) || continue
        cluster_ports+=("$port")
    done
    for port in "${cluster_ports[@]}"; do
        start_cluster_node "$port"
    done
    for port in "${cluster_ports[@]}"; do
        for i in $(seq 50); do
            answers "redis://127.0.0.1:$port" && break
            (( i == 50 )) && { log "cluster node $port did not start:"; tail -n 5 "$cluster_dir/$port/redis.log" >&2; exit 1; }
            sleep 0.1
        done
    done
    local addrs=()
    for port in "${cluster_ports[@]}"; do addrs+=("127.0.0.1:$port"); done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$cluster_dir/create.log" 2>&1 || {
        log "redis-cli --cluster create failed:"; tail -n 20 "$cluster_dir/create.log" >&2; exit 1; }
    # Every node must agree the cluster is ok, and every master must have its replica
    # online (synced: until then WAIT counts none).
    for i in $(seq 200); do
        ok=1
        for port in "${cluster_ports[@]}"; do
            redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || { ok=0; break; }
        done
        if (( ok )); then
            for port in "${cluster_ports[@]}"; do
                if redis-cli -p "$port" role 2>/dev/null | head -n 1 | grep -q master; then
                    redis-cli -p "$port" info replication | grep -q '^slave0:.*state=online' || { ok=0; break; }
                fi
            done
        fi
        (( ok )) && break
        (( i == 200 )) && { log "the cluster did not become ok"; exit 1; }
        sleep 0.1
    done
    REDIS_CLUSTER_NODES=$(for port in "${cluster_ports[@]:0:3}"; do printf 'redis://127.0.0.1:%s,' "$port"; done)
    REDIS_CLUSTER_NODES=${REDIS_CLUSTER_NODES%,}
    export REDIS_CLUSTER_NODES
    log "started a local Redis Cluster (3 masters, $(( 3 + spares )) replicas) on ports ${cluster_ports[*]}"
}
