#!/usr/bin/env bash
# The whole test suite, as CI runs it. Extra arguments go to pytest.
#
# Python: the active virtual environment when there is one ($VIRTUAL_ENV), else the venv at
# $BLOCKKIT_VENV (default .venv in the repository), made here with `python3 -m venv` when it
# does not exist. Nothing is ever installed into the system Python, so this works where pip
# refuses it (PEP 668: Debian, Ubuntu). Into that venv it installs the package with its test
# extra, pinned by requirements/test.txt (refresh it with scripts/lock.sh), so every machine
# tests with the same versions. Then Debian's chromium, node and npm when absent (as root;
# otherwise it says what to install), and runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${VIRTUAL_ENV:-}" ]; then
  python="$VIRTUAL_ENV/bin/python"
else
  venv="${BLOCKKIT_VENV:-.venv}"
  if [ ! -x "$venv/bin/python" ]; then
    if ! python3 -m venv "$venv" 2>/dev/null; then
      # Debian ships venv's pip bootstrap apart from python3 itself.
      rm -rf "$venv"
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv "$venv"
      else
        echo "scripts/test.sh: python3 cannot make a venv; install it with: sudo apt-get install python3-venv" >&2
        exit 2
      fi
    fi
  fi
  python="$venv/bin/python"
  # As `activate` would: the venv's scripts (blockkit, pre-commit, mkdocs) first on PATH.
  export VIRTUAL_ENV="$(cd "$venv" && pwd)"
  export PATH="$VIRTUAL_ENV/bin:$PATH"
fi

# Install only when pyproject.toml or the pins changed since this venv last installed them.
stamp="$("$python" -c 'import sys; print(sys.prefix)')/.blockkit-test-deps"
wanted="$(cat pyproject.toml requirements/test.txt | "$python" -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  "$python" -m pip install --quiet --disable-pip-version-check -c requirements/test.txt -e '.[test]'
  echo "$wanted" > "$stamp"
fi

# Debian packages the heavy tests use: chromium (browser tests), node and npm (real builds),
# Neovim and Emacs with eglot (the editor setups of docs/editor.md, in tests/lsp/test_editors.py).
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
command -v nvim >/dev/null 2>&1 || missing+=(neovim)
if ! command -v emacs >/dev/null 2>&1; then
  missing+=(emacs-nox elpa-eglot)
elif ! emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; then
  missing+=(elpa-eglot)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "scripts/test.sh: missing ${missing[*]}; install with: sudo apt-get install ${missing[*]}" >&2
  fi
fi

exec "$python" -m pytest "$@"
