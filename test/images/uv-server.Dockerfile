# A test MCP server image: a PyPI package's wheels in the uv stand-in, runnable offline by
# `uvx <package>@<version>` (see uv.toml).
FROM ghcr.io/astral-sh/uv:python3.11-bookworm-slim
ARG REQUIREMENT
RUN sh /usr/local/lib/mcp-operator-test/uv-wheels.sh "$REQUIREMENT"
