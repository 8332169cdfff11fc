# Gatehouse in a container: a build stage, then a slim runtime holding only the bundle (dist/) and
# the production dependencies, run as the unprivileged `node` user.
#
#   docker build -t gatehouse .
#   docker run -p 8080-8082:8080-8082 -v gatehouse-data:/data gatehouse
#   docker run --rm -i -v gatehouse-data:/data gatehouse user create --username alice --email a@example.com --password-stdin
#
# Data: SQLite at /data/gatehouse.db (a volume), and beside it the files bots send and, unless the
# key comes from GATEHOUSE_SECRET_KEY or a mounted file (GATEHOUSE_SECRET_KEY_FILE=/run/secrets/…),
# the key file secret.key. Several processes on PostgreSQL: examples/compose/compose.yaml.
# Base images as build arguments, so a mirror or a pinned digest can stand in.
ARG NODE_IMAGE=node:20-bookworm
ARG NODE_SLIM_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first: this layer is reused while package*.json are unchanged.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
# The bundle (scripts/build.mjs), then the dev dependencies dropped; native addons stay as built here.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_SLIM_IMAGE} AS runtime
ENV NODE_ENV=production \
    GATEHOUSE_COMPILED=1 \
    GATEHOUSE_HOST=0.0.0.0 \
    GATEHOUSE_DATABASE_URL=sqlite:/data/gatehouse.db
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
# bin/gatehouse.mjs checks the bundle with it; without src/ the bundle is taken as built.
COPY --from=build /app/scripts/freshness.mjs ./scripts/freshness.mjs
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# {auth_url}, {api_url}, {bot_api_url}
EXPOSE 8080 8081 8082
# Liveness (docs/deployment.md): 200 while the process runs, even while its database is unreachable.
# A process without the auth role (GATEHOUSE_ROLES=worker) has no listener: give it its own check.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.GATEHOUSE_AUTH_PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/gatehouse.mjs"]
CMD ["serve"]
