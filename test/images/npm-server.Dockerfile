# A test MCP server image: an npm package installed globally in the Node stand-in, runnable
# offline both by its bin name and by `npx -y <package>@<version>` (see node.Dockerfile).
FROM node:24-bookworm-slim
ARG PACKAGE
RUN npm install --global "$PACKAGE" && npm cache clean --force
