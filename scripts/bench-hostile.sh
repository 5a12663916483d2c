#!/usr/bin/env bash
# Hostile loads against a server at a public server's defaults (examples/hostile.rs), each
# on a server of its own, games in memory:
# - flood-start: three addresses make tournaments due at once that cancel themselves,
#   while a bystander's tournament starts: how late it starts (goal: under 2 s);
# - fill: two addresses make every kind of thing a store keeps for FILL_SECS (600), with
#   MEMORY_MAX_BYTES at FILL_MIB (32) MiB: the server's RSS (goal: within 1.5x) and whether a
#   bystander from a third address can still create a game.
# `scripts/bench-hostile.sh flood-start` or `... fill` runs one of them.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

log() { printf 'bench-hostile.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/domino-bench-hostile.XXXXXX")
prefix="bench:$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n'):"
cleanup() {
    local status=$?
    stop_bench_server
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT

memory_max_bytes=$((${FILL_MIB:-32} * 1024 * 1024))
# The documented defaults (docs/configuration.md), put back over the limits the other
# benches raise for their one load client.
defaults=(GAME_IDLE_TTL_SECS=86400 RATE_LIMIT_PER_IP=2000 RATE_LIMIT_PER_TOKEN=200
    MAX_WAITING_PER_IP=20 MAX_GAMES_PER_IP=100 MAX_PLAYERS_PER_IP=20 MAX_STREAMS_PER_IP=32
    MAX_CONNECTIONS_PER_IP=256)

log "building ($BENCH_PROFILE)"
nice -n "${NICE:-5}" cargo build --profile "$BENCH_PROFILE" --quiet --bin domino-server --example hostile
bin="$CARGO_TARGET_DIR/$BENCH_PROFILE/domino-server"
example="$CARGO_TARGET_DIR/$BENCH_PROFILE/examples/hostile"

machine_line
echo "profile: $BENCH_PROFILE; $(rustc --version)"
if [[ $# == 0 || $1 == flood-start ]]; then
    start_bench_server "$bin" "${defaults[@]}"
    "$example" --url "$url" --server-pid "$server_pid" flood-start
    stop_bench_server
fi
if [[ $# == 0 || $1 == fill ]]; then
    start_bench_server "$bin" "${defaults[@]}" MEMORY_MAX_BYTES="$memory_max_bytes"
    "$example" --url "$url" --server-pid "$server_pid" fill \
        --secs "${FILL_SECS:-600}" --memory-max-bytes "$memory_max_bytes"
    stop_bench_server
fi
