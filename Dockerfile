# syntax=docker/dockerfile:1
# The island daemon's container image: built from this repository, run from the deployed package
# alone (its bundle, the console's files and its production dependencies at the lockfile's
# versions; no sources, no workspace packages, no build tools). See deploy/README.md.
#
#   docker build -t microdcs-island .
#   docker run -d --name island-1 --stop-timeout 45 -p 8080:8080 \
#     -e VALKEY_URL=redis://valkey:6379 -e MQTT_URL=mqtt://broker:1883 \
#     -e ISLAND_INSTANCE_ID=island-1 -e HTTP_TOKEN=... -v island-1-state:/var/lib/microdcs \
#     microdcs-island
#
# Settings are environment variables, every one listed with its default in
# deploy/systemd/microdcs-island.env.example (usable as `docker run --env-file`). For a container:
#   VALKEY_URL, MQTT_URL   required: the image carries no valkey-server or mosquitto to embed
#   ISLAND_INSTANCE_ID     set it, stable across restarts (consumer name, MQTT client id, lease holder)
#   HTTP_TOKEN             set it: the image listens on all interfaces (HTTP_HOST=0.0.0.0, port 8080),
#                          /metrics and /api/* then need "Authorization: Bearer {token}"
#   PG_URL                 the execution log's PostgreSQL; unset, an embedded PGlite keeps the archive
#                          in PG_DATA_DIR=/var/lib/microdcs/execution-log (mount a volume on /var/lib/microdcs)
#   SHUTDOWN_GRACE_MS      15000: on SIGTERM the daemon drains and exits 0, ending itself after
#                          2 x grace + 5 s (35 s): give `docker stop` (--stop-timeout) or Compose
#                          (stop_grace_period) more than that, 45 s
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# pnpm 12, the repository's package manager, from the npm registry.
RUN npm install --global --no-audit --no-fund pnpm@12
COPY . .
RUN pnpm install --frozen-lockfile \
 && pnpm --filter @microdcs/island-daemon run build \
 && pnpm --filter @microdcs/island-daemon deploy --prod /out/island-daemon \
 && rm /out/island-daemon/pnpm-workspace.yaml

FROM ${NODE_IMAGE} AS runtime
ENV HTTP_HOST=0.0.0.0 \
    HTTP_PORT=8080 \
    PG_DATA_DIR=/var/lib/microdcs/execution-log
WORKDIR /opt/microdcs/island-daemon
# Owned by root, read-only to the daemon's user: only its state directory is writable.
COPY --from=build /out/island-daemon ./
RUN mkdir -p /var/lib/microdcs && chown node:node /var/lib/microdcs
USER node
VOLUME ["/var/lib/microdcs"]
EXPOSE 8080
# Ready: Valkey answers, MQTT connected and subscribed, every role healthy (/readyz stays open with HTTP_TOKEN).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HTTP_PORT}/readyz`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# As the bin's shebang does: --no-memory-protection-keys for the embedded PostgreSQL's WebAssembly.
ENTRYPOINT ["node", "--no-memory-protection-keys", "dist/island-daemon.mjs"]
