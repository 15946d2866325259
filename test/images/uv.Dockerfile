# Stand-in for ghcr.io/astral-sh/uv:python3.11-bookworm-slim, made without an image registry:
# the Debian stand-in with Debian's python3 (3.11, the version the tag names) and uv from its
# PyPI wheel. Test tooling only (test/images/bases.ts).
FROM debian:bookworm-slim AS python
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/*

FROM python AS wheel
COPY uv.whl /tmp/uv.whl
RUN python3 -m zipfile -e /tmp/uv.whl /tmp/uv \
 && mv /tmp/uv/uv-*.data/scripts /tmp/bin \
 && chmod 0755 /tmp/bin/*

FROM python
COPY --from=wheel /tmp/bin/ /usr/local/bin/
# HTTPS from a build goes through this machine's intercepting proxy, whose CA is in this bundle.
COPY ca-certificates.crt /usr/local/share/mcp-operator-test/ca-certificates.crt
COPY uv-wheels.sh /usr/local/lib/mcp-operator-test/uv-wheels.sh
COPY uv.toml /etc/uv/uv.toml
# Requirements (pip syntax) whose wheels `uvx` finds offline; see uv.toml.
ARG REQUIREMENTS=""
RUN mkdir -p /opt/uv/wheels \
 && if [ -n "$REQUIREMENTS" ]; then sh /usr/local/lib/mcp-operator-test/uv-wheels.sh $REQUIREMENTS; fi \
 && uv --version
