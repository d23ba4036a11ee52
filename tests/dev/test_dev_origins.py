"""The two dev origins against a hostile web page (review rows 44, 45, 52, 53; issue 13 item 2).

Each test starts from a reproduction of the security review: a forged ``Host``
(DNS rebinding), a cross-site ``text/plain`` post, a 50 MB body, malformed JSON,
terminal escapes in a message type, keep-alive latency.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from blockkit.dev.host_app import API_BODY_LIMIT
from blockkit.dev.servers import bind_loopback
from blockkit.dev.session import DevOptions, DevSession

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"
EVIL = "https://evil.example"
ALLOWED = "dev.example.test"
# The review's payload: an OSC that retitles the terminal, then a CI workflow command on a new line.
HOSTILE_TYPE = "\x1b]0;PWNED-TITLE\x07\n::error::PWN"


def in_own_loop(coroutine: Any) -> Any:
    # A thread of its own: in a full run, Playwright's sync API keeps an event loop on the main thread.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=30)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DevSession]:
    options = DevOptions(block_dir=FIXTURES / "handshake", trace_path=tmp_path / "t.jsonl", allowed_hosts=(ALLOWED,))
    with DevSession(options) as running:
        yield running


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def request(
    url: str, method: str = "GET", *, host: str | None = None, body: bytes | None = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """One raw request to ``url``'s server, with exactly the Host and headers given."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=10)
    try:
        connection.putrequest(method, parts.path or "/", skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or parts.netloc)
        for name, value in headers.items():
            connection.putheader(name.replace("_", "-"), value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def post_json(session: DevSession, path: str, document: Any, **headers: str) -> tuple[int, dict[str, str], bytes]:
    sent = {"content_type": "application/json", "origin": session.host_url.rstrip("/"),
            "x_blockkit_dev_key": session.dev_key, **headers}
    return request(session.host_url + path, "POST", body=json.dumps(document).encode(), **sent)


# ---- Host: DNS rebinding (issue 13 item 2; review rows 44, 45) ---------------------------------


@pytest.mark.parametrize("origin, path", [("host", ""), ("host", "api/trace"), ("block", "bridge.js"), ("block", "")])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "localhost.evil.example:{port}", "localhost:{other}"])
def test_each_origin_refuses_a_foreign_host(session: DevSession, origin: str, path: str, host: str) -> None:
    url = (session.host_url if origin == "host" else session.block_url) + path
    port, other = port_of(url), port_of(session.block_url if origin == "host" else session.host_url)
    status, headers, body = request(url, host=host.format(port=port, other=other))
    assert status == 403
    assert headers["content-type"].startswith("text/plain")
    lines = body.decode().splitlines()
    assert len(lines) == 1 and "is not a name of this server" in lines[0] and "--allowed-host" in lines[0]


def test_a_foreign_host_gets_no_token_and_leaves_no_trace(session: DevSession) -> None:
    status, _, body = request(session.host_url + "api/token", "POST", host="evil.example", body=b"{}",
                              content_type="application/json", origin="http://evil.example")
    assert status == 403 and b"raw" not in body
    assert session.events() == []


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1", "[::1]", ALLOWED])
def test_each_origin_answers_its_own_names(session: DevSession, name: str) -> None:
    for url in (session.host_url, session.block_url + "bridge.js"):
        assert request(url, host=f"{name}:{port_of(url)}")[0] == 200


# ---- the run's key (security review 2, S04) -------------------------------------------------------

API_ROUTES = ["api/page", "api/token", "api/viewer", "api/inbound", "api/events", "api/dialog", "api/download",
              "api/consent", "api/consent/reset", "api/scenario", "api/frame-navigated", "api/requests", "api/console"]


def test_the_host_page_holds_no_token(session: DevSession) -> None:
    # S04 (2): any local account read initPayload.token.raw from the page. Now the page is a shell.
    status, headers, body = request(session.host_url)
    assert status == 200 and headers["referrer-policy"] == "no-referrer"
    html = body.decode()
    assert '"raw"' not in html and "eyJ" not in html and "initPayload" not in html and session.dev_key not in html


@pytest.mark.parametrize("path", API_ROUTES)
@pytest.mark.parametrize("key", [None, "", "wrong", "another-runs-key-of-the-same-length-xxx"])
def test_a_local_client_without_the_key_is_refused_and_gets_no_token(session: DevSession, path: str,
                                                                      key: str | None) -> None:
    # S04 (1) and (3): a program of another account writes the host page's Origin (any program can) and
    # asks for a token, or switches the viewer. Without this run's key: 401, nothing minted or changed.
    viewer = session.platform.viewer() if session.platform else None
    extra = {} if key is None else {"x_blockkit_dev_key": key}
    status, _, answer = request(session.host_url + path, "POST", body=json.dumps({"userId": 4, "pageId": "x"}).encode(),
                                content_type="application/json", origin=session.host_url.rstrip("/"), **extra)
    assert status == 401, answer
    error = json.loads(answer)["error"]
    assert "this run's key" in error and "#key=" in error
    assert b"raw" not in answer and b"eyJ" not in answer
    assert (session.platform.viewer() if session.platform else None) == viewer
    assert session.events() == []


def test_the_trace_needs_the_key_too(session: DevSession) -> None:
    assert request(session.host_url + "api/trace")[0] == 401
    assert request(session.host_url + "api/trace", x_blockkit_dev_key=session.dev_key)[0] == 200


def test_with_the_key_the_page_gets_its_token(session: DevSession) -> None:
    status, _, answer = post_json(session, "api/page", {"subPath": None})
    assert status == 200
    config = json.loads(answer)
    assert config["initPayload"]["token"]["raw"].startswith("eyJ") and config["pageId"]
    status, _, answer = post_json(session, "api/token", {"pageId": config["pageId"]})
    assert status == 200 and json.loads(answer)["token"]["raw"]


@pytest.mark.parametrize("headers", [{"sec_fetch_site": "cross-site"}, {"sec_fetch_site": "same-site"},
                                     {"origin": EVIL}, {"origin": "http://127.0.0.1:9"}])
def test_with_the_key_another_site_is_still_refused(session: DevSession, headers: dict[str, str]) -> None:
    # The key and the origin: a page on another site (or another local port) that learnt the key gets 403.
    status, _, answer = post_json(session, "api/page", {}, **headers)
    assert status == 403 and b"raw" not in answer


def test_the_printed_url_carries_the_key_in_its_fragment(session: DevSession) -> None:
    assert session.page_url == f"{session.host_url}#key={session.dev_key}"
    other = DevSession(DevOptions(block_dir=FIXTURES / "handshake"))
    assert other.dev_key != session.dev_key and len(session.dev_key) >= 32


# ---- the host API: cross-site writes, sizes, malformed bodies (rows 45, 53) --------------------


def test_a_cross_site_text_plain_post_is_refused_and_not_recorded(session: DevSession) -> None:
    message = {"t": 1, "jsType": "object", "data": {"type": HOSTILE_TYPE}}
    body = json.dumps(message).encode()
    status, _, answer = request(session.host_url + "api/inbound", "POST", body=body,
                                content_type="text/plain", origin="http://evil.example")
    assert status == 403 and b"only this server's own pages may write" in answer
    # Neither a page on another site (Origin null from a sandbox) nor a request with no Origin writes.
    for headers in ({"origin": "null"}, {}):
        assert request(session.host_url + "api/inbound", "POST", body=body, content_type="application/json", **headers)[0] == 403
    # The host page's own origin, but not as JSON: a form or a text/plain fetch is still refused.
    status, _, answer = request(session.host_url + "api/inbound", "POST", body=body, content_type="text/plain",
                                origin=session.host_url.rstrip("/"), x_blockkit_dev_key=session.dev_key)
    assert status == 415 and json.loads(answer) == {"error": "send the body as application/json"}
    assert session.events() == []
    # The host page itself, under either loopback name, is heard.
    for origin in (session.host_url.rstrip("/"), f"http://127.0.0.1:{port_of(session.host_url)}"):
        assert post_json(session, "api/inbound", message, origin=origin)[0] == 200
    assert len(session.events()) == 4  # two messages, each with its violation


def test_an_oversized_body_is_refused_before_it_is_read(session: DevSession) -> None:
    big = {"t": 1, "jsType": "object", "data": {"type": "BLOCK_READY", "payload": {"x": "a" * API_BODY_LIMIT}}}
    status, _, answer = post_json(session, "api/inbound", big)
    assert status == 413 and "larger than 1048576 bytes" in json.loads(answer)["error"]
    assert session.events() == []


def test_an_oversized_chunked_body_is_refused_too(session: DevSession) -> None:
    # No Content-Length to go by: the cap counts what arrives.
    chunks = (b"[" + b" " * 65536 for _ in range(40))
    connection = http.client.HTTPConnection("127.0.0.1", port_of(session.host_url), timeout=10)
    try:
        connection.request("POST", "/api/inbound", body=chunks, encode_chunked=True,
                           headers={"content-type": "application/json", **session.api_headers()})
        response = connection.getresponse()
        assert response.status == 413
    finally:
        connection.close()
    assert session.events() == []


@pytest.mark.parametrize(
    "path, body",
    [
        ("api/events", b'{"events":[{"kind":"unanswered","waitedMs":"abc"}]}'),
        ("api/events", b'{"events":[{"kind":"unanswered","waitedMs":1' + b"0" * 400 + b"}]}"),
        ("api/events", b'{"events":[{"kind":"unanswered","waitedMs":1e400}]}'),
        ("api/events", b'{"events":[{"kind":"unanswered","waitedMs":NaN}]}'),
        ("api/inbound", b'{"data":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        ("api/inbound", b'{"data":' + b"[" * 300 + b"]" * 300 + b"}"),
        ("api/inbound", b'{"data": {"type": "X"}'),
        ("api/inbound", b"[1, 2]"),
        ("api/inbound", b"\xff\xfe"),
    ],
    ids=["waitedMs-string", "waitedMs-400-digits", "waitedMs-1e400", "waitedMs-NaN", "depth-100k", "depth-300",
         "truncated", "array", "not-utf8"],
)
def test_a_malformed_body_is_a_400_not_a_500(session: DevSession, path: str, body: bytes) -> None:
    status, _, answer = request(session.host_url + path, "POST", body=body, content_type="application/json",
                                origin=session.host_url.rstrip("/"), x_blockkit_dev_key=session.dev_key)
    assert status == 400, answer
    assert json.loads(answer)["error"]
    assert session.events() == []


# ---- the block origin's files (row 44) ------------------------------------------------------------


def test_the_block_files_are_readable_by_the_frame_only(session: DevSession) -> None:
    # The fixture's sandbox is "allow-scripts allow-forms": the frame's origin is opaque.
    status, headers, _ = request(session.block_url + "bridge.js", origin=EVIL)
    assert status == 200 and "access-control-allow-origin" not in headers and headers["vary"] == "origin"
    assert request(session.block_url + "bridge.js", origin="null")[1]["access-control-allow-origin"] == "null"
    assert "access-control-allow-origin" not in request(session.block_url + "bridge.js")[1]


def test_with_allow_same_origin_in_the_manifest_the_frame_is_still_opaque(make_block: Any, tmp_path: Path) -> None:
    # The frame's sandbox never holds allow-same-origin (the spec; the platform's for unverified
    # apps), so the opaque origin is the frame's and reads the block's files. (It used to be
    # refused here, when the manifest's sandbox was used verbatim.)
    block = make_block("handshake", iframe={"sandbox": "allow-scripts allow-same-origin"})
    with DevSession(DevOptions(block_dir=block, trace_path=tmp_path / "t.jsonl")) as running:
        block_origin = running.block_url.rstrip("/")
        headers = request(running.block_url + "bridge.js", origin="null")[1]
        own = request(running.block_url + "bridge.js", origin=block_origin)[1]
    assert headers["access-control-allow-origin"] == "null"
    assert own["access-control-allow-origin"] == block_origin


# ---- what reaches the terminal (row 45) -----------------------------------------------------------


def test_block_text_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "blockkit.cli", "dev", str(FIXTURES / "handshake"), "--trace", str(tmp_path / "t.jsonl")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        banner = [process.stdout.readline() for _ in range(2)]
        found = re.search(r"(http://localhost:\d+/)#key=([\w-]+)", banner[1])
        assert found, banner
        host_url, key = found.group(1), found.group(2)
        body = json.dumps({"t": 1, "jsType": "object", "data": {"type": HOSTILE_TYPE}}).encode()
        status, _, _ = request(host_url + "api/inbound", "POST", body=body, content_type="application/json",
                               origin=host_url.rstrip("/"), x_blockkit_dev_key=key)
        assert status == 200
        # Row 53's bodies, while we are here: answered 400, no traceback on the terminal.
        request(host_url + "api/events", "POST", body=b'{"events":[{"kind":"unanswered","waitedMs":"abc"}]}',
                content_type="application/json", origin=host_url.rstrip("/"), x_blockkit_dev_key=key)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
    assert "\x1b" not in err and "\x07" not in err and "Traceback" not in err
    assert not any(line.startswith("::") for line in err.splitlines())
    [violation] = [line for line in err.splitlines() if line.startswith("violation:")]
    assert violation.startswith("violation: unknown-type \\x1b]0;PWNED-TITLE\\x07\\x0a::error::PWN: ")


# ---- keep-alive latency (row 52) ------------------------------------------------------------------


def test_accepted_connections_get_tcp_nodelay() -> None:
    """asyncio (so uvicorn) sets TCP_NODELAY only when the listening socket says it is TCP."""
    listener = bind_loopback(0, "probe")
    seen: list[int] = []

    async def main() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=listener)
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
            await reader.read()
            writer.close()

    in_own_loop(main())
    assert seen and seen[0] != 0
