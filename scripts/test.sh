#!/usr/bin/env bash
# The project's one test command: makes sure a Redis is reachable, then runs every test.
#
# The Redis store is tested against a real Redis (the same contract tests as the memory
# store), so a Redis must exist. Where it comes from, in order (scripts/redis-lib.sh):
#   1. REDIS_URL, if it is set and answers PING;
#   2. 127.0.0.1:6379, if it answers PING;
#   3. a throwaway redis-server started here on a free port (no persistence), stopped on
#      exit; Debian's redis-server package is installed with apt-get if the binary is
#      missing.
#
# It also starts a local Redis Cluster (3 masters with one replica each, and a spare
# replica, on free ports, stopped on exit; scripts/redis-lib.sh `start_cluster`) and
# exports REDIS_CLUSTER_NODES: the store's contract tests (`store` `cluster::…`) and some
# API tests (`api` `<area>::cluster::…`) run on it as on the single Redis. Last, on that
# cluster, the failover test kills the master of a game's slot, then a whole shard
# (`api` `failover`, ignored otherwise).
#
# Arguments are passed to `cargo test --all-targets` (e.g. `scripts/test.sh redis::`);
# with none, everything is built first, then three lanes run beside the tests: schemathesis
# against the OpenAPI document (scripts/schemathesis.sh), then Redocly's lint of it
# (scripts/openapi-lint.sh); the example clients (scripts/clients.sh), then the webhook
# starter kits without a server (scripts/webhook-kits-check.sh); a browser client on
# another origin (scripts/cross-origin-check/run.sh), then the watch page
# (scripts/watch-check/run.sh); and a fourth after the tests, the failover test. Their
# packages install while cargo builds; each lane's log is under target/
# (lane-<name>.log) and printed at the end.
#
# Knob (for testing this script itself): DOMINO_TEST_REDIS_PORT_PROBE=<port> probes that
# port instead of 6379 in step 2; point it at a closed port to force step 3.
set -euo pipefail

cd "$(dirname "$0")/.."

log() { printf 'test.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/redis-lib.sh
source scripts/redis-lib.sh
trap 'stop_cluster; stop_redis' EXIT
REDIS_PROBE_PORT=${DOMINO_TEST_REDIS_PORT_PROBE:-6379} ensure_redis
start_cluster 1

target_dir=${CARGO_TARGET_DIR:-target}
# Unfiltered, the other checks' packages (npm, PyPI, Debian's chromium: mostly network
# and unpacking) install in the background while cargo builds, each script doing its
# own install (CHECKS_INSTALL_ONLY=1, scripts/server-lib.sh).
installs=""
if [[ $# == 0 ]]; then
    mkdir -p "$target_dir"
    (
        export CHECKS_INSTALL_ONLY=1
        scripts/schemathesis.sh && scripts/openapi-lint.sh && scripts/clients.sh \
            && scripts/cross-origin-check/run.sh && scripts/watch-check/run.sh
    ) >"$target_dir/check-installs.log" 2>&1 &
    installs=$!
fi

# Four tests at once in each test binary, not one a core: most of a test's time is spent
# waiting on its servers, bots, Redis and deadlines, so on 2 cores the api tests take
# 125 s this way against 220 s (session 32, 660 tests; BENCHMARKS.md, "Building").
export RUST_TEST_THREADS=${RUST_TEST_THREADS:-4}

if [[ $# != 0 ]]; then
    cargo test --workspace --all-targets "$@"
    cargo test --workspace --doc
    exit 0
fi

# Unfiltered: everything is built first, then the checks that need no cluster run beside
# the tests (each waits on servers, bots and browsers as much as it computes, so on 2
# cores the two together take little longer than the tests alone), and the failover test
# after them (it kills masters of the cluster the tests use).
cargo test --workspace --all-targets --no-run
wait "$installs" || { log "FAILED: installing the checks' packages:"; cat "$target_dir/check-installs.log" >&2; exit 1; }
# The debug server the tests built, one binary for every check below.
export DOMINO_SERVER_BIN="$target_dir/debug/domino-server"

# Four lanes, each a log of its own, shown when all are done.
# - Schemathesis: generated requests against the committed OpenAPI document (PyPI's
#   schemathesis, in a venv under target/): no 5xx, no answer outside the document; then
#   Redocly's lint of the document as client generators read it: 0 errors, 0 warnings.
# - The example clients (examples/clients/), generated from the same document and built
#   with pinned npm and PyPI packages under target/, play whole games against the server;
#   then the webhook kits answer calls signed as the server signs them (no server, no
#   packages: a few seconds).
# - A page on another origin plays a move in headless Chromium (CORS_ORIGINS), and is
#   blocked without it (Debian's chromium and playwright-core); then the watch page draws
#   a game, plays one by clicking and replays it, after its layout geometry's unit tests
#   under `node --test` (scripts/watch-check/run.sh).
# - The failover test kills a master of the cluster, then a whole shard: it starts once
#   the tests, which use the cluster, are done.
lanes=(schemathesis clients browsers failover)
declare -A lane_pid
lane() { # name command...
    local name=$1
    shift
    (
        started=$SECONDS status=0
        "$@" || status=$?
        echo "lane $name: exit $status after $((SECONDS - started)) s"
        exit "$status"
    ) \
        >"$target_dir/lane-$name.log" 2>&1 &
    lane_pid[$name]=$!
}
# Their servers keep their games in memory: never on the cluster the tests use and the
# failover lane kills (a server reads REDIS_CLUSTER_NODES from its environment).
lane schemathesis env -u REDIS_CLUSTER_NODES bash -c 'scripts/schemathesis.sh && scripts/openapi-lint.sh'
lane clients env -u REDIS_CLUSTER_NODES bash -c 'scripts/clients.sh && scripts/webhook-kits-check.sh'
lane browsers env -u REDIS_CLUSTER_NODES bash -c 'scripts/cross-origin-check/run.sh && scripts/watch-check/run.sh'
tests_status=0
cargo test --workspace --all-targets && cargo test --workspace --doc || tests_status=$?
# Built already: nothing to compile.
lane failover cargo test --test api failover -- --ignored --nocapture
failed=()
for name in "${lanes[@]}"; do
    wait "${lane_pid[$name]}" || failed+=("$name")
    printf -- '---- %s ----\n' "$name"
    cat "$target_dir/lane-$name.log"
done
stop_cluster
(( tests_status == 0 )) || failed+=("cargo test (exit $tests_status)")
if (( ${#failed[@]} )); then
    log "FAILED: ${failed[*]}"
    exit 1
fi
