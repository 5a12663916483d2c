#!/usr/bin/env bash
# Lints the committed OpenAPI document with Redocly's recommended ruleset (npm's
# @redocly/cli, no configuration): it must report 0 errors and 0 warnings. A warning
# fails too: the rules flag what client generators stumble on.
#
# - Installs @redocly/cli (pinned) with npm into a prefix under the cargo target dir if it
#   is missing; fails loudly if it cannot (the check is never skipped silently).
# - Needs no server: it reads openapi/openapi.json, which a test keeps equal to the
#   served document (`UPDATE_OPENAPI=1 cargo test --test openapi` regenerates it).
#
# Knob (environment): REDOCLY_VERSION (default the pinned one below).
set -euo pipefail

cd "$(dirname "$0")/.."

log() { printf 'openapi-lint.sh: %s\n' "$*" >&2; }

version=${REDOCLY_VERSION:-2.77.0}
target_dir=${CARGO_TARGET_DIR:-target}
prefix="$target_dir/redocly-cli"
redocly="$prefix/node_modules/.bin/redocly"

if ! [[ -x $redocly ]] || [[ $("$redocly" --version 2>/dev/null | tail -n 1) != "$version" ]]; then
    log "installing @redocly/cli $version into $prefix"
    rm -rf "$prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --silent "@redocly/cli@$version" \
        || { log "FAILED: npm install @redocly/cli@$version (is npm installed?)"; exit 1; }
fi
# CHECKS_INSTALL_ONLY=1: installed, nothing more (scripts/server-lib.sh's install_only).
[[ -z ${CHECKS_INSTALL_ONLY:-} ]] || exit 0

# Redocly fails on errors only; the totals tell warnings too.
report=$("$redocly" lint openapi/openapi.json --format=json 2>/dev/null) || true
totals=$(jq -c '.totals' <<<"$report" 2>/dev/null) || totals=""
if [[ -z $totals || $totals == null ]]; then
    log "FAILED: no report from redocly lint; its own words:"
    "$redocly" lint openapi/openapi.json --format=stylish >&2 || true
    exit 1
fi
errors=$(jq '.errors' <<<"$totals")
warnings=$(jq '.warnings' <<<"$totals")
if [[ $errors != 0 || $warnings != 0 ]]; then
    "$redocly" lint openapi/openapi.json --format=stylish >&2 || true
    log "FAILED: $errors errors, $warnings warnings (0 and 0 wanted)"
    exit 1
fi
printf 'openapi-lint: 0 errors, 0 warnings (@redocly/cli %s, recommended rules)\n' "$version"
