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
# with none, the failover test, then schemathesis against the OpenAPI document
# (scripts/schemathesis.sh), Redocly's lint of it (scripts/openapi-lint.sh), the example
# clients (scripts/clients.sh) and a browser client on another origin
# (scripts/cross-origin-check/run.sh) run too.
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

cargo test --workspace --all-targets "$@"
cargo test --workspace --doc
if [[ $# == 0 ]]; then
    # Kills a master of the cluster: nothing may use the cluster afterwards.
    cargo test --test api failover -- --ignored --nocapture
    stop_cluster
fi
# Generated requests against the committed OpenAPI document (PyPI's schemathesis, in a
# venv under target/): no 5xx, no answer outside the document. Skipped only when a
# filter was given, to run a subset of the cargo tests.
if [[ $# == 0 ]]; then
    scripts/schemathesis.sh
    # The document as client generators read it: 0 errors, 0 warnings.
    scripts/openapi-lint.sh
fi
# The example clients (examples/clients/), generated from the same document and built with
# pinned npm and PyPI packages under target/, play whole games against the server.
if [[ $# == 0 ]]; then
    scripts/clients.sh
fi
# A page on another origin plays a move in headless Chromium (CORS_ORIGINS), and is
# blocked without it (Debian's chromium and playwright-core, installed if missing).
if [[ $# == 0 ]]; then
    scripts/cross-origin-check/run.sh
fi
# The watch page draws a game, plays one by clicking and replays it in headless Chromium,
# after its layout geometry's unit tests under `node --test` (scripts/watch-check/run.sh).
if [[ $# == 0 ]]; then
    scripts/watch-check/run.sh
fi
