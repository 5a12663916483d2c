#!/usr/bin/env bash
# Checks the webhook starter kits (examples/clients/webhook_bot.py, webhook_bot.mjs) the way
# the server will call them (shared/API.md, "Webhook bots"), without the server: python3
# and node 20, standard library and built-ins only, nothing installed.
#
# Each kit is started on a free loopback port, first without DOMINO_WEBHOOK_SECRET (as it
# runs while its webhook is registered: the ping comes before the secret is shown), then
# with one; scripts/webhook-kits/check.py then sends it, as the server would:
# - a ping, unsigned, signed, and signed with another secret: each answered 200
#   {"challenge": <the same>}; without a secret, a move call is refused (401);
# - a move call signed with the secret (Domino-Signature: t=<unix ms>,v1=<hex HMAC-SHA256
#   over "<t>.<body>">) carrying the view of scripts/webhook-kits/move-call.json (the
#   GameView of openapi/openapi.json's MoveResult example, checked here to have every
#   field GameView requires): the answer must be one of the view's legal_moves, unchanged,
#   and the one with the most points (the kits' default), also with legal_moves reversed;
# - refused with 401: another secret, another body, no header, t 6 minutes old or ahead,
#   t in seconds, a v1 cut short or lengthened, no t; accepted: two v1 of which one is
#   right; a signed body that is not JSON: 400.
# Exits 1 if any check failed; stops the kits it started.
set -euo pipefail

cd "$(dirname "$0")/.."

log() { printf 'webhook-kits-check.sh: %s\n' "$*" >&2; }

# shellcheck source=scripts/server-lib.sh
source scripts/server-lib.sh
install_only && exit 0

command -v python3 >/dev/null || { log "FAILED: python3 is not installed"; exit 1; }
command -v node >/dev/null || { log "FAILED: node is not installed"; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

secret="whsec_$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
failed=()

# run_kit NAME SECRET COMMAND...: starts the kit on a free port, runs check.py against it.
run_kit() {
    local name=$1 kit_secret=$2
    shift 2
    local port
    port=$(free_port)
    DOMINO_WEBHOOK_SECRET=$kit_secret "$@" --port "$port" >"$work/$name.log" 2>&1 &
    local pid=$!
    pids+=("$pid")
    if ! wait_port "$port" "$pid"; then
        log "FAILED: $name did not start:"
        cat "$work/$name.log" >&2
        failed+=("$name")
        return
    fi
    echo "$name: $(head -n 1 "$work/$name.log")"
    python3 scripts/webhook-kits/check.py "http://127.0.0.1:$port/" "${kit_secret:---no-secret}" \
        || { failed+=("$name"); log "$name's output:"; cat "$work/$name.log" >&2; }
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

run_kit "python kit, no secret" "" python3 examples/clients/webhook_bot.py
run_kit "python kit" "$secret" python3 examples/clients/webhook_bot.py
run_kit "node kit, no secret" "" node examples/clients/webhook_bot.mjs
run_kit "node kit" "$secret" node examples/clients/webhook_bot.mjs

if ((${#failed[@]})); then
    log "FAILED: ${failed[*]}"
    exit 1
fi
echo "webhook-kits-check.sh: both kits passed every check"
