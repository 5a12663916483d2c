# Shared by the scripts that run the debug server for a client (scripts/schemathesis.sh,
# scripts/clients.sh, scripts/cross-origin-check/run.sh). Source it after defining
# `log`.

# A free TCP port on loopback.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until something listens on loopback port $1; fails if process $2 dies first or
# nothing listens within about 10 s.
wait_port() { # port pid
    for _ in $(seq 100); do
        timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || { log "a server died before listening on $1"; return 1; }
        sleep 0.1
    done
    log "nothing listens on $1"
    return 1
}
