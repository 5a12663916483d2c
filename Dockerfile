# syntax=docker/dockerfile:1
#
# The server image: built in one stage, run from a slim one.
#
#   docker build -t domino-server .                           # build only (the default)
#   docker build --build-arg RUN_TESTS=1 -t domino-server .   # build + every test
#
# A user's build compiles the server and nothing else: CI (scripts/test.sh) runs the
# tests. With RUN_TESTS=1 the build stage runs them too, so that such an image only
# exists for code that passed them: part of the suite needs a real Redis, and part a
# Redis Cluster, so it starts a throwaway redis-server on loopback and a local cluster of
# six (scripts/redis-lib.sh `start_cluster`) for the test command (no persistence; they
# die with the RUN step); the failover test, which kills a node, is left to
# scripts/test.sh. The image is built with the `profiling` profile (thin LTO: about 5%
# fewer instructions a move than `--release`, which is chosen for a developer's wait), and
# the tests with it too, so the test build shares its compiled dependencies with the
# final binary's build.

ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=bookworm

FROM rust:${RUST_VERSION}-${DEBIAN_RELEASE} AS build
ARG RUN_TESTS=0
WORKDIR /src
COPY . .
# Cache mounts keep the registry and compiled dependencies between builds; the binary
# is copied out of the cached target dir in the same step, since the mount is gone after.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    set -eu; \
    if [ "$RUN_TESTS" = 1 ]; then \
        apt-get update && apt-get install -y --no-install-recommends redis-server; \
        redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes; \
        bash -c 'set -eu; log() { echo "$*" >&2; }; source scripts/redis-lib.sh; \
            trap stop_cluster EXIT; start_cluster; \
            REDIS_URL=redis://127.0.0.1:6379 cargo test --profile profiling --locked --workspace --all-targets'; \
        redis-cli -p 6379 shutdown nosave || true; \
    fi; \
    cargo build --profile profiling --locked --bin domino-server; \
    cp target/profiling/domino-server /usr/local/bin/domino-server

FROM debian:${DEBIAN_RELEASE}-slim AS runtime
# ca-certificates: for rediss:// (TLS) Redis URLs.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 domino \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin domino
COPY --from=build /usr/local/bin/domino-server /usr/local/bin/domino-server
# Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001
# Logs as JSON lines for collectors; every other setting keeps its default, listed in
# docs/configuration.md (REDIS_URL unset means games live in memory and die with the
# container).
ENV BIND_ADDR=0.0.0.0:8080 \
    LOG_FORMAT=json \
    RUST_LOG=info
EXPOSE 8080
# No HEALTHCHECK: the slim image has no HTTP client, and adding one only for this would
# grow the attack surface; orchestrators probe GET /healthz (liveness) and GET /readyz
# (readiness) themselves. SIGTERM (Docker's stop signal) drains in-flight requests for
# up to SHUTDOWN_TIMEOUT_SECS (8 s, inside Docker's default 10 s grace).
ENTRYPOINT ["/usr/local/bin/domino-server"]
