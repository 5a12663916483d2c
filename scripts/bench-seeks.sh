#!/usr/bin/env bash
# The matchmaking benchmark: examples/matchmaking.rs through two server processes on one
# Redis (scripts/bench-servers.sh). Arguments go to the example, e.g.
# `scripts/bench-seeks.sh --players 400 --seconds 30`
# (see `cargo run --release --example matchmaking -- --help`).
exec "$(dirname "$0")/bench-servers.sh" matchmaking "$@"
