# syntax=docker/dockerfile:1
# One image for the controller and the bridge sidecar:
#   mcp-operator controller | mcp-operator bridge … | mcp-operator bridge-install --to <dir>
# It also ships the static busybox and the supervisor script that the bridge's init container
# copies into a stdio server's pod (docs/adr/0002-stdio-bridge-sidecar.md).
# No container engine builds it in CI: test/packaging/dockerfile.test.ts replays it instead.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the image already has Node 24; the `node` dev dependency only pins it for
# machines with an older system Node.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM debian:bookworm-slim AS busybox
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static \
 && rm -rf /var/lib/apt/lists/*

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# `mcp-operator dev` installs the CRD from here.
COPY crds ./crds
COPY --from=busybox /bin/busybox /usr/lib/mcp-operator/busybox
COPY src/bridge/supervisor.sh /usr/lib/mcp-operator/supervisor.sh
RUN chmod 0755 /app/dist/cli.js /usr/lib/mcp-operator/supervisor.sh \
 && ln -s /app/dist/cli.js /usr/local/bin/mcp-operator
# 65532: the conventional non-root "nonroot" uid; numeric so runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["mcp-operator"]
CMD ["controller"]
