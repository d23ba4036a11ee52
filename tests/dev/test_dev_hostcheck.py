"""The Host and Origin guard on its own: names, ports, origins, and what a refusal looks like."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from blockkit.emulator.http.hostcheck import (
    HostAllowlist,
    HostGuard,
    OriginPolicy,
    check_entry,
    split_host,
)

PORT = 18082


def in_own_loop(coroutine: Any) -> Any:
    # A thread of its own: in a full run, Playwright's sync API keeps an event loop on the main thread.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=30)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("localhost:18082", ("localhost", 18082)),
        ("LocalHost:18082", ("localhost", 18082)),
        ("127.0.0.1", ("127.0.0.1", None)),
        ("[::1]:5173", ("[::1]", 5173)),
        ("my-box.local:80", ("my-box.local", 80)),
        ("::1", None),  # IPv6 without brackets
        ("[::1", None),
        ("localhost.", None),  # the trailing dot is another name
        ("user@localhost:18082", None),
        ("localhost:", None),
        ("localhost:0", None),
        ("localhost:65536", None),
        ("localhost:+80", None),
        ("evil example", None),
        ("", None),
    ],
)
def test_split_host(value: str, expected: tuple[str, int | None] | None) -> None:
    assert split_host(value) == expected


def test_loopback_names_only_on_their_own_port() -> None:
    hosts = HostAllowlist(PORT)
    for name in ("localhost", "127.0.0.1", "[::1]", "LOCALHOST"):
        assert hosts.allows(f"{name}:{PORT}")
        assert not hosts.allows(f"{name}:{PORT + 1}")
        assert not hosts.allows(name)  # port 80 is not this server's
    for foreign in ("evil.example", f"evil.example:{PORT}", f"localhost.evil.example:{PORT}", f"127.0.0.1.nip.io:{PORT}", None, ""):
        assert not hosts.allows(foreign)


def test_extra_names() -> None:
    hosts = HostAllowlist(PORT, ("Dev.Example.Test", "pinned.test:9000", ".wild.test"))
    assert hosts.extra == ("dev.example.test", "pinned.test:9000", ".wild.test")
    assert hosts.allows("dev.example.test") and hosts.allows("dev.example.test:443")
    assert hosts.allows("pinned.test:9000") and not hosts.allows(f"pinned.test:{PORT}")
    assert hosts.allows("wild.test:1") and hosts.allows("a.b.wild.test")
    assert not hosts.allows("notwild.test") and not hosts.allows("example.test")


@pytest.mark.parametrize("entry", ["evil example", "a/b", "http://x.test", "x.test:0", "", "*.x.test"])
def test_malformed_entries_are_refused(entry: str) -> None:
    with pytest.raises(ValueError, match="is not a host name"):
        check_entry(entry)


def test_origins() -> None:
    host_site = HostAllowlist(PORT)
    block_site = HostAllowlist(18081)
    frame = OriginPolicy((block_site,), opaque=True)
    pages = OriginPolicy((host_site, block_site))
    assert pages.allows(f"http://localhost:{PORT}") and pages.allows("http://127.0.0.1:18081")
    assert frame.allows("null") and not pages.allows("null")
    for foreign in ("https://evil.example", f"http://evil.example:{PORT}", f"http://localhost:{PORT}/path",
                    f"ftp://localhost:{PORT}", "http://localhost", None, "", "file://"):
        assert not pages.allows(foreign)
    # No port: the scheme's default (443), which is not this server's.
    assert not pages.allows("https://localhost")


def call(guard: HostGuard, scope: dict[str, Any]) -> tuple[int | str, bytes]:
    """Run one request through ``guard``: (status, body), or ("app", b"") when it let it through."""
    sent: list[dict[str, Any]] = []
    reached: list[bool] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"} if scope["type"] == "websocket" else {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    guard.app = app
    in_own_loop(guard(scope, receive, send))
    if reached:
        return "app", b""
    start = sent[0]
    if start["type"] == "websocket.close":
        return "closed", b""
    return start["status"], sent[1]["body"]


def scope(kind: str = "http", method: str = "GET", **headers: str) -> dict[str, Any]:
    encoded = [(k.encode(), v.encode("latin-1")) for k, v in headers.items()]
    found: dict[str, Any] = {"type": kind, "headers": encoded, "path": "/"}
    if kind == "http":
        found["method"] = method
    return found


def guard(**options: Any) -> HostGuard:
    async def nothing(scope: Any, receive: Any, send: Any) -> None:
        return None

    return HostGuard(nothing, HostAllowlist(PORT), **options)


def test_a_foreign_host_gets_one_line_and_403() -> None:
    status, body = call(guard(hint="; pass --allowed-host NAME"), scope(host="evil.example"))
    assert status == 403
    text = body.decode()
    assert text.count("\n") == 1 and text.endswith("--allowed-host NAME\n")
    assert text.startswith("Host 'evil.example' is not a name of this server")


def test_a_refusal_quotes_the_header_escaped_and_short() -> None:
    status, body = call(guard(), scope(host="\x1b]0;x\x07" + "a" * 500))
    assert status == 403 and b"\x1b" not in body and b"\\x1b" in body and len(body) < 400


def test_missing_or_doubled_host_is_refused() -> None:
    assert call(guard(), scope())[0] == 403
    doubled = scope(host=f"localhost:{PORT}")
    doubled["headers"].append((b"host", b"evil.example"))
    assert call(guard(), doubled)[0] == 403


def test_own_host_passes_and_lifespan_is_untouched() -> None:
    assert call(guard(), scope(host=f"localhost:{PORT}"))[0] == "app"
    assert call(guard(), {"type": "lifespan"})[0] == "app"


def test_writes_need_an_own_origin_only_when_asked() -> None:
    writes = guard(write_origins=OriginPolicy((HostAllowlist(PORT),)))
    own = f"http://localhost:{PORT}"
    assert call(writes, scope(method="POST", host=f"localhost:{PORT}", origin=own))[0] == "app"
    assert call(writes, scope(method="GET", host=f"localhost:{PORT}", origin="https://evil.example"))[0] == "app"
    for origin in ("https://evil.example", "null"):
        status, body = call(writes, scope(method="POST", host=f"localhost:{PORT}", origin=origin))
        assert status == 403 and b"only this server's own pages may write" in body
    assert call(writes, scope(method="DELETE", host=f"localhost:{PORT}"))[0] == 403  # no Origin
    assert call(guard(), scope(method="POST", host=f"localhost:{PORT}", origin="https://evil.example"))[0] == "app"


def test_websocket_origins() -> None:
    sockets = guard(websocket_origins=OriginPolicy((HostAllowlist(PORT),), opaque=True))
    host = f"localhost:{PORT}"
    assert call(sockets, scope("websocket", host=host, origin=f"http://127.0.0.1:{PORT}"))[0] == "app"
    assert call(sockets, scope("websocket", host=host, origin="null"))[0] == "app"
    assert call(sockets, scope("websocket", host=host))[0] == "app"  # not a browser
    assert call(sockets, scope("websocket", host=host, origin="https://evil.example"))[0] == "closed"
    assert call(sockets, scope("websocket", host="evil.example", origin=f"http://{host}"))[0] == "closed"
    # By default a server takes sockets from its own pages only.
    assert call(guard(), scope("websocket", host=host, origin="null"))[0] == "closed"


def test_a_websocket_refusal_uses_the_denial_response_when_the_server_has_it() -> None:
    refused = scope("websocket", host="evil.example")
    refused["extensions"] = {"websocket.http.response": {}}
    status, body = call(guard(), refused)
    assert status == 403 and body.startswith(b"Host 'evil.example'")
