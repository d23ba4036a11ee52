#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what the tests need (the package
# with its test extras, and Debian's chromium for the browser tests), then runs
# pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "scripts/test.sh: chromium is missing; install it with: sudo apt-get install chromium" >&2
  fi
fi

exec python3 -m pytest "$@"
