"""Headless Chromium through Playwright, the way this project runs it.

Debian's chromium, never a browser Playwright downloads. As root it needs
``--no-sandbox``; the network flags stop Chromium's own background traffic,
which a closed network refuses many times a second.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from blockkit.dev.errors import DevError

CHROMIUM_ENV = "BLOCKKIT_CHROMIUM"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium_path() -> Path | None:
    """The Chromium to drive: $BLOCKKIT_CHROMIUM, /usr/bin/chromium, or one on PATH."""
    configured = os.environ.get(CHROMIUM_ENV)
    candidates = [configured] if configured else [DEFAULT_CHROMIUM, shutil.which("chromium")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def playwright_available() -> bool:
    from importlib.util import find_spec

    return find_spec("playwright") is not None


def require_browser() -> Path:
    if not playwright_available():
        raise DevError("--check drives Chromium through Playwright for Python: pip install playwright")
    path = chromium_path()
    if path is None:
        raise DevError(
            f"--check needs Chromium at {DEFAULT_CHROMIUM} (apt-get install chromium) "
            f"or named by ${CHROMIUM_ENV}"
        )
    return path


def launch_chromium(playwright: Any, executable: Path | None = None) -> Any:
    """Launch headless Chromium; Playwright gives it a fresh, throwaway profile."""
    return playwright.chromium.launch(
        executable_path=str(executable or require_browser()),
        headless=True,
        args=list(CHROMIUM_ARGS),
    )
