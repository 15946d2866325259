#!/bin/sh
# Downloads the wheels of the given requirements and of their dependencies, for this image's
# Python, into /opt/uv/wheels where uvx finds them (uv.toml). Build time only: it reaches PyPI
# through this machine's proxy, whose CA is in the bundle below.
set -eu
export SSL_CERT_FILE=/usr/local/share/mcp-operator-test/ca-certificates.crt
# uv has no download command; pip, in a throwaway environment, has.
uv --no-config venv --quiet /tmp/pip
uv --no-config pip install --quiet --python /tmp/pip pip
/tmp/pip/bin/pip download --quiet --disable-pip-version-check --cert "$SSL_CERT_FILE" \
  --only-binary :all: --dest /opt/uv/wheels "$@"
rm -rf /tmp/pip "${HOME:?}/.cache"
