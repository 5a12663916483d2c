#!/usr/bin/env bash
# Tries the Swagger UI as a person would: headless Chromium opens /swagger-ui, and through
# "Try it out" creates a game against a bot, takes a seat, authorizes with its token,
# reads the view and posts a legal move; it fails unless every step answers as the API
# says and no request leaves the server (the UI's assets are served by the binary).
#
# Not part of scripts/test.sh: it needs Debian's chromium and playwright-core from npm,
#   apt-get install -y chromium && (cd scripts/swagger-ui-check && npm install playwright-core@1)
# Usage: scripts/swagger-ui-check/run.sh   (builds and starts a server on a free port)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet --bin domino-server
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BIND_ADDR=127.0.0.1:$port RUST_LOG=warn target/debug/domino-server &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
NODE_PATH="$PWD/scripts/swagger-ui-check/node_modules" node scripts/swagger-ui-check/check.js "http://127.0.0.1:$port"
