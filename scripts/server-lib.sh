# Shared by the scripts that run the debug server for a client (scripts/schemathesis.sh,
# scripts/clients.sh, scripts/cross-origin-check/run.sh, scripts/watch-check/run.sh).
# Source it after defining `log`.

# The debug server binary, in `server_bin`: DOMINO_SERVER_BIN when set (scripts/test.sh
# builds it once for every check), else built here if needed.
server_binary() {
    if [[ -n ${DOMINO_SERVER_BIN:-} ]]; then
        server_bin=$DOMINO_SERVER_BIN
    else
        cargo build --quiet --bin domino-server
        server_bin="${CARGO_TARGET_DIR:-target}/debug/domino-server"
    fi
}

# CHECKS_INSTALL_ONLY=1: a check script installs what it needs and stops there (scripts/test.sh
# installs them all in the background while cargo builds).
install_only() {
    [[ -n ${CHECKS_INSTALL_ONLY:-} ]]
}

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

# Debian's chromium (installed with apt-get if /usr/bin/chromium is missing) and the
# pinned npm packages of $1 (its package.json and package-lock.json, e.g. playwright-core)
# installed with `npm ci` into $2, once per lock file. Sets `node_path` to their
# node_modules. Fails loudly if it cannot.
ensure_browser_deps() { # package dir, install dir
    local here=$1 deps=$2 sudo="" lock_sum
    if ! [[ -x /usr/bin/chromium ]]; then
        log "installing Debian's chromium"
        [[ $(id -u) == 0 ]] || sudo=sudo
        { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium >/dev/null; } \
            || { log "FAILED: apt-get install chromium"; return 1; }
    fi
    lock_sum=$(sha256sum "$here/package-lock.json" | cut -d" " -f1)
    if [[ $(cat "$deps/.installed" 2>/dev/null) != "$lock_sum" ]]; then
        log "installing $here's packages into $deps (npm ci)"
        rm -rf "$deps"
        mkdir -p "$deps"
        cp "$here/package.json" "$here/package-lock.json" "$deps/"
        (cd "$deps" && npm ci --no-audit --no-fund --loglevel=error) \
            || { log "FAILED: npm ci in $deps"; return 1; }
        echo "$lock_sum" >"$deps/.installed"
    fi
    node_path=$(cd "$deps/node_modules" && pwd)
}
