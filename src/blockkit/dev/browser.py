"""Headless Chromium through Playwright: which one, and how it is started.

Playwright comes with the ``browser`` extra (``pip install 'blockkit[browser]'``).
The browser is whichever Chromium is found first:

1. ``--browser PATH``;
2. ``$BLOCKKIT_BROWSER`` (or its older name ``$BLOCKKIT_CHROMIUM``);
3. a system Chromium on PATH (Debian's ``apt-get install chromium``), where
   browser downloads are blocked;
4. the Chromium Playwright downloads (``python -m playwright install chromium``).

A system browser comes first because it is the one the machine keeps updated.
Playwright drives each of them through ``executable_path``. As root Chromium
needs ``--no-sandbox``; the network flags stop its own background traffic,
which a closed network refuses many times a second.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blockkit.dev.errors import DevError

BROWSER_ENV = "BLOCKKIT_BROWSER"
# The variable's name before --browser existed; still read, after the new one.
LEGACY_BROWSER_ENV = "BLOCKKIT_CHROMIUM"
# Names a system Chromium goes by on PATH: Debian and Fedora, Ubuntu's older
# package, Google's builds.
SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome")
EXTRA = "blockkit[browser]"
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

# How the ways to get a browser read in an error; both must be there, since
# browser downloads work on some machines and are blocked on others.
_WAYS = (
    "python -m playwright install chromium where browser downloads work, or a system Chromium "
    "where they do not (apt-get install chromium, found on PATH); or name any Chromium with "
    f"--browser PATH or ${BROWSER_ENV}"
)
NO_PLAYWRIGHT = f"--check drives Chromium through Playwright, which is not installed: pip install '{EXTRA}'; then get a browser: {_WAYS}"
NO_BROWSER = f"--check found no Chromium; get one: {_WAYS}"

# Where a browser was found, as the lookup order names it.
FROM_OPTION = "--browser"
FROM_ENV = f"${BROWSER_ENV}"
FROM_PATH = "PATH"
FROM_PLAYWRIGHT = "Playwright's download"


@dataclass(frozen=True)
class Browser:
    path: Path
    found_by: str


def playwright_available() -> bool:
    from importlib.util import find_spec

    return find_spec("playwright") is not None


def playwright_download() -> Path | None:
    """Where ``python -m playwright install chromium`` puts Chromium, if it is there.

    Only Playwright's driver knows the path (it depends on Playwright's version and
    $PLAYWRIGHT_BROWSERS_PATH), so this starts the driver, which takes a moment.
    """
    if not playwright_available():
        return None
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as playwright:
            return _existing(playwright.chromium.executable_path)
    except PlaywrightError:
        return None


def find_browser(
    option: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    search_path: str | None = None,
    downloaded: Callable[[], Path | None] | None = playwright_download,
) -> Browser:
    """The Chromium to drive, in the order of the module's docstring; DevError if none.

    A browser named by the option or the variable must exist: a typo there is an
    error, not a silent fall back to another browser. ``search_path`` replaces
    $PATH and ``downloaded`` Playwright's lookup (None: skip it), for tests and for
    callers that already run Playwright.
    """
    env = os.environ if env is None else env
    if option:
        return Browser(_named(option, "--browser", search_path), FROM_OPTION)
    for variable in (BROWSER_ENV, LEGACY_BROWSER_ENV):
        if env.get(variable):
            return Browser(_named(env[variable], f"${variable}", search_path), f"${variable}")
    for name in SYSTEM_NAMES:
        found = shutil.which(name, path=search_path)
        if found:
            return Browser(Path(found), FROM_PATH)
    path = downloaded() if downloaded is not None else None
    if path is not None:
        return Browser(path, FROM_PLAYWRIGHT)
    raise DevError(NO_BROWSER)


def _named(value: str, where: str, search_path: str | None) -> Path:
    # A bare name is looked up on PATH, like a command; anything with a slash is a file.
    if os.sep not in value and (os.altsep is None or os.altsep not in value):
        found = shutil.which(value, path=search_path)
        if found:
            return Path(found)
    path = Path(value).expanduser()
    if not path.is_file():
        raise DevError(f"{where} {value}: no such file; name a Chromium executable")
    if not os.access(path, os.X_OK):
        raise DevError(f"{where} {value}: not executable; name a Chromium executable")
    return path.absolute()


def _existing(path: str | None) -> Path | None:
    return Path(path) if path and Path(path).is_file() else None


def require_browser(option: str | None = None) -> Path:
    """The browser ``--check`` will drive, or a DevError that says how to get one."""
    if not playwright_available():
        raise DevError(NO_PLAYWRIGHT)
    return find_browser(option).path


def chromium_path() -> Path | None:
    """A Chromium named by $BLOCKKIT_BROWSER or on PATH, or None (Playwright's download is not asked)."""
    try:
        return find_browser(downloaded=None).path
    except DevError:
        return None


def launch_chromium(playwright: Any, executable: Path | None = None) -> Any:
    """Launch headless Chromium; Playwright gives it a fresh, throwaway profile."""
    if executable is None:
        # The running driver answers where its own download is; no second driver.
        executable = find_browser(downloaded=lambda: _existing(playwright.chromium.executable_path)).path
    return playwright.chromium.launch(
        executable_path=str(executable),
        headless=True,
        args=list(CHROMIUM_ARGS),
    )
