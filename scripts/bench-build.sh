#!/usr/bin/env bash
# How long a newcomer waits: a cold `cargo run --release` (an empty target directory, the
# crates already downloaded) until the server answers /healthz, then a release rebuild
# after an edit of one handler (an error message of src/api/games/play.rs changed, then
# put back: a change of code, which a comment is not to an incremental build). Prints both, with the machine and the profile. Run it on a quiet machine: the
# figures are wall-clock seconds.
#
#   scripts/bench-build.sh            # the release profile
#   PROFILE=lto scripts/bench-build.sh  # another profile of Cargo.toml
#
# It builds in a target directory of its own (removed at the end), so the checkout's
# target/ is left as it is.
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'bench-build.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh

profile=${PROFILE:-release}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
target=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-build.XXXXXX")
handler=src/api/games/play.rs
server_pid=""
# `cargo run` does not pass a signal on to the server it started: stop the server first.
stop_server() {
    [[ -n $server_pid ]] || return 0
    pkill -P "$server_pid" 2>/dev/null || true
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}
cleanup() {
    local status=$?
    stop_server
    [[ -f $target/handler.rs ]] && cp "$target/handler.rs" "$handler"
    rm -rf "$target"
    exit "$status"
}
trap cleanup EXIT

log "fetching the crates first (not timed)"
cargo fetch --quiet

port=$(free_port)
echo "machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
echo "versions: $(rustc --version); profile: $profile"
start=$(date +%s.%N)
env -u REDIS_URL -u REDIS_CLUSTER_NODES CARGO_TARGET_DIR="$target" BIND_ADDR="127.0.0.1:$port" \
    cargo run --quiet --profile "$profile" --bin domino-server >"$target/server.log" 2>&1 &
server_pid=$!
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
    kill -0 "$server_pid" 2>/dev/null || { log "cargo run stopped:"; tail -n 20 "$target/server.log" >&2; exit 1; }
    sleep 0.2
done
echo "cold cargo run until /healthz answers: $(elapsed "$start") s"
stop_server

cp "$handler" "$target/handler.rs"
grep -q '"wait goes with after=<version>"' "$handler" || { log "the edited message is gone from $handler"; exit 1; }
sed -i 's/"wait goes with after=<version>"/"wait goes with after=<version>, edited"/' "$handler"
start=$(date +%s.%N)
CARGO_TARGET_DIR="$target" cargo build --quiet --profile "$profile" --bin domino-server
echo "rebuild after an edit of $handler: $(elapsed "$start") s"
