"""Fixtures of the web console's tests: an emulator with an access key, and a browser signed in to it.

- ``console`` (function): an in-process :class:`Emulator` on a fresh data directory, started with an
  access key (as ``blockkit emulator start`` does); ``console.key`` is the key, ``console.url`` the
  console's address.
- ``console_page`` (function): a Chromium page (the project's session ``browser``) that opened
  the console's sign-in link, so it holds the ``bk_access_<port>`` cookies; dialogs are accepted.
- ``other_page``: a loopback page on another port (another origin, the same site), for the
  cross-origin checks.
"""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

KEY = "console-test-key-" + "k" * 24
TOKEN = re.compile(r'<meta name="bk-console-token" content="([0-9a-f]+)">')


@dataclass
class Console:
    emu: Any
    key: str

    @property
    def base(self) -> str:
        return str(self.emu.urls.base_url)

    @property
    def url(self) -> str:
        return self.base + "/__emulator/"

    @property
    def store(self) -> Any:
        return self.emu.store

    @property
    def clock(self) -> Any:
        return self.emu.clock

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.get(self.base + path, headers={"X-Blockkit-Access-Key": self.key, **kwargs.pop("headers", {})},
                         **kwargs)

    def token(self) -> str:
        found = TOKEN.search(self.get("/__emulator/").text)
        assert found is not None
        return found.group(1)


@pytest.fixture
def console(tmp_path: Path) -> Iterator[Console]:
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    with Emulator(EmulatorOptions(data=tmp_path / "data", access_key=KEY)) as emu:
        yield Console(emu, KEY)


@pytest.fixture
def console_page(console: Console, browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900}, accept_downloads=True)
    try:
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(console.url + "?key=" + console.key)
        assert page.url == console.url, page.url  # the key left the address bar
        yield page
    finally:
        context.close()


@pytest.fixture
def other_page() -> Iterator[str]:
    """Another origin on 127.0.0.1 (another port: the same site, so SameSite cookies still travel)."""
    body = b"<!doctype html><title>another page</title><p id=here>another origin</p>"

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
