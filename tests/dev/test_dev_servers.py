"""The two servers over plain HTTP: loopback, headers, proxy errors, the host API."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev import trace
from blockkit.dev.session import DevOptions, DevSession

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dev"


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DevSession]:
    with DevSession(DevOptions(block_dir=FIXTURES / "handshake", trace_path=tmp_path / "t.jsonl")) as running:
        yield running


def fetch(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """GET, or POST ``body`` as JSON the way the host page does: from its own origin."""
    data = None if body is None else json.dumps(body).encode()
    parts = urllib.parse.urlsplit(url)
    sent = {"content-type": "application/json", "origin": f"{parts.scheme}://{parts.netloc}", **(headers or {})}
    request = urllib.request.Request(url, data=data, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def api(session: DevSession, path: str, body: Any = None) -> tuple[int, dict[str, str], bytes]:
    """A host API call as host.js makes it: from the host page's origin, with the run's key."""
    return fetch(session.host_url + path, body, headers=session.api_headers())


def host_config(session: DevSession, sub_path: str | None = None) -> dict[str, Any]:
    """Load the host page once, as a browser would: the page, then its configuration (POST /api/page)."""
    assert fetch(session.host_url)[0] == 200
    status, _, body = api(session, "api/page", {"subPath": sub_path})
    assert status == 200, body
    return json.loads(body)  # type: ignore[no-any-return]


def test_both_servers_listen_on_loopback_only_on_two_origins(session: DevSession) -> None:
    (block_address, block_port), (host_address, host_port) = session.addresses()
    assert block_address == host_address == "127.0.0.1" and block_port != host_port
    assert session.block_url == f"http://127.0.0.1:{block_port}/"
    assert session.host_url == f"http://localhost:{host_port}/"


def test_the_block_origin_allows_the_opaque_origin_and_never_caches(session: DevSession) -> None:
    # The fixture's sandbox has no allow-same-origin: the frame's requests say Origin: null.
    status, headers, body = fetch(session.block_url + "bridge.js", headers={"origin": "null"})
    assert status == 200 and b"BLOCK_READY" in body
    assert headers["access-control-allow-origin"] == "null"
    assert headers["vary"] == "origin"
    assert headers["cache-control"] == "no-store"


def test_dot_paths_are_not_served(session: DevSession) -> None:
    assert fetch(session.block_url + ".blockkit/t.jsonl")[0] == 404


def test_the_host_page_gets_its_config_from_the_api(session: DevSession) -> None:
    config = host_config(session)
    assert config["blockUrl"] == session.block_url
    assert config["iframe"]["sandbox"] == "allow-scripts allow-forms"
    assert config["timings"]["init_repost_ms"] == 400


def page_id(session: DevSession) -> str:
    """Load the host page once, as a browser would: the page load registers a block instance."""
    return str(host_config(session)["pageId"])


def test_the_host_api_judges_records_and_answers(session: DevSession) -> None:
    message = {"type": "REQUEST_TOKEN", "payload": {"requestId": "r1"}}
    inbound = {"t": 5, "attempt": 1, "jsType": "object", "data": message, "pageId": page_id(session)}
    status, _, body = api(session, "api/inbound", inbound)
    answer = json.loads(body)
    assert status == 200 and answer["violations"] == []
    assert answer["reply"]["type"] == "TOKEN_REFRESH_RESPONSE" and answer["reply"]["payload"]["requestId"] == "r1"
    assert _jwt_header(answer["reply"]["payload"]["token"]["raw"])["alg"] == "RS256"

    _, _, body = api(session, "api/inbound", {"t": 6, "jsType": "string", "data": "hello"})
    assert [v["kind"] for v in json.loads(body)["violations"]] == ["envelope"]

    unanswered = {"kind": "unanswered", "type": "FETCH", "requestId": "q", "waitedMs": 1000, "t": 7}
    _, _, body = api(session, "api/events", {"events": [unanswered]})
    assert [v["kind"] for v in json.loads(body)["violations"]] == ["unanswered-request"]

    assert api(session, "api/inbound", [1, 2])[0] == 400
    events = trace.read_jsonl(session.trace_path)
    assert [e["kind"] for e in events] == ["message", "message", "violation", "violation"]
    assert [e["seq"] for e in events] == [1, 2, 3, 4]


def _jwt_header(raw: str) -> dict[str, Any]:
    import base64

    part = raw.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))  # type: ignore[no-any-return]


@pytest.mark.parametrize("page", [None, "not-a-page-of-this-run"])
def test_a_token_request_from_an_unknown_page_gets_no_unsigned_token(session: DevSession, page: str | None) -> None:
    # PLATFORM.md §8: the platform's token route refuses an instance it does not know; there is
    # no unsigned fallback. A host tab left open across a restart names a page this run never saw.
    extra = {} if page is None else {"pageId": page}
    message = {"type": "REQUEST_TOKEN", "payload": {"requestId": "r2"}}
    _, _, body = api(session, "api/inbound", {"t": 1, "jsType": "object", "data": message, **extra})
    reply = json.loads(body)["reply"]
    assert reply["type"] == "TOKEN_REFRESH_RESPONSE"
    assert reply["payload"] == {"requestId": "r2", "ok": False, "error": "UNKNOWN_BLOCK_INSTANCE",
                                "message": reply["payload"]["message"]}
    assert "reload" in reply["payload"]["message"]
    status, _, body = api(session, "api/token", extra)
    assert status == 409 and "reload" in json.loads(body)["error"]
    [call] = [e for e in session.events() if e.get("kind") == "call"]
    assert call["type"] == "REQUEST_TOKEN" and call["ok"] is False and call["error"] == "UNKNOWN_BLOCK_INSTANCE"


def test_a_token_request_without_request_id_gets_a_token_refresh_push(session: DevSession) -> None:
    # PLATFORM.md §8: REQUEST_TOKEN without a string requestId is answered by a TOKEN_REFRESH push.
    inbound = {"t": 1, "jsType": "object", "data": {"type": "REQUEST_TOKEN", "payload": {}}, "pageId": page_id(session)}
    reply = json.loads(api(session, "api/inbound", inbound)[2])["reply"]
    assert reply["type"] == "TOKEN_REFRESH" and set(reply["payload"]) == {"token"}
    assert _jwt_header(reply["payload"]["token"]["raw"])["alg"] == "RS256"
    # The page's token route mints the same kind for a known page.
    status, _, body = api(session, "api/token", {"pageId": inbound["pageId"]})
    assert status == 200 and _jwt_header(json.loads(body)["token"]["raw"])["alg"] == "RS256"


def test_an_unreachable_proxy_target_is_a_clear_502(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    options = DevOptions(
        block_dir=FIXTURES / "handshake", proxy=f"http://127.0.0.1:{closed_port}", trace_path=tmp_path / "t.jsonl"
    )
    with DevSession(options) as running:
        status, _, body = fetch(running.block_url)
    assert status == 502 and b"did not answer" in body and b"Is it running?" in body


def test_the_command_serves_until_ctrl_c(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "blockkit.cli", "dev", str(FIXTURES / "handshake"), "--trace", str(tmp_path / "t.jsonl"),
         "--allowed-host", "Dev.Example.Test"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        banner = [process.stdout.readline() for _ in range(3)]
        host_url = re.search(r"http://localhost:\d+/", banner[1])
        printed = re.search(r"#key=([\w-]+)", banner[1])
        assert printed, banner
        keyed = {"x-blockkit-dev-key": printed.group(1)}
        block_url = re.search(r"http://127\.0\.0\.1:\d+/", banner[2])
        assert host_url and block_url, banner
        assert fetch(host_url.group(0))[0] == 200
        assert fetch(block_url.group(0) + "index.html")[0] == 200
        # Another name answers only when --allowed-host gives it, and the banner says so.
        assert "also for   dev.example.test" in [process.stdout.readline() for _ in range(2)][1]
        port = host_url.group(0).rsplit(":", 1)[1].rstrip("/")
        assert fetch(host_url.group(0), headers={"host": f"dev.example.test:{port}"})[0] == 200
        assert fetch(host_url.group(0), headers={"host": f"other.example.test:{port}"})[0] == 403
        # A violation found while serving is said in the terminal as well.
        assert fetch(host_url.group(0) + "api/inbound", {"t": 1, "jsType": "string", "data": "hi"})[0] == 401
        fetch(host_url.group(0) + "api/inbound", {"t": 1, "jsType": "string", "data": "hi"}, headers=keyed)
        # So is a brokered call that failed (here: a request from no page this run loaded).
        pack = {"type": "GET_BUZZ_BALANCE", "payload": {"requestId": "p"}}
        fetch(host_url.group(0) + "api/inbound", {"t": 2, "jsType": "object", "data": pack}, headers=keyed)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert "Traceback" not in err and "stopping" in out
    assert "violation: envelope: the message is a string" in err
    # The trace and the terminal keep the code; the block got the platform's sentence.
    assert "failed call: GET_BUZZ_BALANCE: BLOCK_TOKEN_REQUIRED: invalid block token" in err


def test_the_frames_catalogue_calls_are_traced_with_their_status(session: DevSession) -> None:
    assert session.platform is not None
    base = session.platform.base_url
    page = page_id(session)
    raw = json.loads(api(session, "api/token", {"pageId": page})[2])["token"]["raw"]
    ok = fetch(base + "/api/v1/blocks/models?limit=2", headers={"origin": "null", "authorization": f"Bearer {raw}"})
    refused = fetch(base + "/api/v1/blocks/models", headers={"origin": "null", "authorization": "Bearer not-a-token"})
    # Another site's request is none of the block's business: not traced.
    fetch(base + "/api/v1/blocks/models", headers={"origin": "https://elsewhere.example"})
    assert ok[0] == 200 and refused[0] >= 400
    calls = [e for e in session.events() if e.get("kind") == "call" and e.get("via") == "http"]
    assert [(c["type"], c["ok"], c["status"]) for c in calls] == [
        ("GET /api/v1/blocks/models", True, 200), ("GET /api/v1/blocks/models", False, refused[0])]
    assert calls[0]["query"] == "limit=2" and calls[1]["error"] == f"HTTP {refused[0]}" and calls[1]["message"]
