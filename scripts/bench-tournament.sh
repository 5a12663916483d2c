#!/usr/bin/env bash
# The tournament benchmark: examples/tournament.rs through two server processes on one
# Redis (scripts/bench-servers.sh): a duplicate Swiss of 64 built-in levels, 7 rounds, by
# default. Arguments go to the example, e.g. `scripts/bench-tournament.sh --entrants 32
# --rounds 5` (see `cargo run --release --example tournament -- --help`).
exec "$(dirname "$0")/bench-servers.sh" tournament "$@"
