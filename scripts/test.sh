#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what the tests need (the package
# with its test extras; Debian's chromium, node and npm when absent), then runs
# pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

# Debian packages the heavy tests use: chromium (browser tests), node and npm (real builds).
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "scripts/test.sh: missing ${missing[*]}; install with: sudo apt-get install ${missing[*]}" >&2
  fi
fi

exec python3 -m pytest "$@"
