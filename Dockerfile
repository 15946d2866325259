# One image for the controller and the bridge sidecar:
#   mcp-operator controller | mcp-operator bridge … | mcp-operator bridge-install --to <dir>
# It also ships the static busybox and the supervisor script that the bridge's init container
# copies into a stdio server's pod (docs/adr/0002-stdio-bridge-sidecar.md).
#
# No `# syntax=` line: it would make BuildKit pull a frontend image (docker/dockerfile) before
# building, which fails on an air-gapped builder, and nothing here needs a newer frontend than
# the one built into BuildKit. The legacy builder ignores the line anyway.
#
# Build: docker build -t mcp-operator:<version> .   (test/images builds it the same way)

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the image already has Node 24; the `node` dev dependency only pins it for
# machines with an older system Node.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# --omit=optional leaves out @kubernetes/client-node (64 MB): only kubeconfig users with an exec
# plugin or auth-provider need it, never the in-cluster controller or bridge.
RUN npm run build \
 && npm prune --omit=dev --omit=optional --ignore-scripts \
 && chmod 0755 dist/cli.js dist/kubectl-mcp.js

FROM debian:bookworm-slim AS busybox
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static \
 && rm -rf /var/lib/apt/lists/*

# The runtime's root filesystem: the node binary and the shared libraries it links (as `ldd`
# lists them, so any architecture and libc of NODE_IMAGE works), `env` for the CLI's shebang,
# a passwd entry for the non-root user, and /tmp. No npm, corepack, headers or shell: the
# binary alone runs the operator, and this halves the image. For debugging, the image's
# busybox is at /usr/lib/mcp-operator/busybox (`kubectl exec … -- /usr/lib/mcp-operator/busybox sh`).
FROM ${NODE_IMAGE} AS rootfs
COPY --from=busybox /bin/busybox /rootfs/usr/lib/mcp-operator/busybox
COPY src/bridge/supervisor.sh /rootfs/usr/lib/mcp-operator/supervisor.sh
RUN set -eu \
 && node="$(command -v node)" env="$(command -v env)" \
 && mkdir -p /rootfs/usr/local/bin /rootfs/usr/bin /rootfs/etc /rootfs/tmp /rootfs/app \
 && cp "$node" /rootfs/usr/local/bin/node \
 && cp "$env" /rootfs/usr/bin/env \
 && for lib in $({ ldd "$node"; ldd "$env"; } | grep -o '/[^ ]*' | sort -u); do cp -L --parents "$lib" /rootfs; done \
 && ln -s /app/dist/cli.js /rootfs/usr/local/bin/mcp-operator \
 && ln -s /app/dist/kubectl-mcp.js /rootfs/usr/local/bin/kubectl-mcp \
 && echo 'root:x:0:0:root:/root:/sbin/nologin' > /rootfs/etc/passwd \
 && echo 'nonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin' >> /rootfs/etc/passwd \
 && printf 'root:x:0:\nnonroot:x:65532:\n' > /rootfs/etc/group \
 && chmod 1777 /rootfs/tmp

FROM scratch
COPY --from=rootfs /rootfs /
ENV PATH=/usr/local/bin:/usr/bin \
    NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# `mcp-operator dev` installs the CRD from here.
COPY crds ./crds
# 65532: the conventional non-root "nonroot" uid; numeric so runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["mcp-operator"]
CMD ["controller"]
