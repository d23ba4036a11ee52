"""The security review of 2026-11-27 (E02–E10, E13, E20), each row's reproduction against a served emulator.

One in-process :class:`Emulator` with an access key serves the module (its three origins are real
sockets behind the same guard as ``blockkit emulator start``); rows about start-up (ready file,
file modes, the CLI's key) start their own. The browser rows (cross-site, rebinding) run in
Chromium; the slow-connection row is in ``test_emulator_slow_clients.py``.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from emulator_helpers import stored_media

from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.http.access import access_cookie
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.runtime import Emulator, write_ready_file

KEY = "test-access-key-0123456789"
EVIL = "https://evil.example"


@pytest.fixture(scope="module")
def emu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with Emulator(EmulatorOptions(data=tmp_path_factory.mktemp("sec") / "data", access_key=KEY)) as emulator:
        yield emulator


def port_of(url: str) -> int:
    return int(urlsplit(url).port or 80)


def client(url: str, **headers: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers=headers, follow_redirects=False, timeout=10)


def clock_now(emu: Emulator) -> float:
    from blockkit.emulator.store.clock import parse_timestamp

    return parse_timestamp(httpx.get(emu.urls.base_url + "/__emulator/clock").json()["now"]).timestamp()


@pytest.fixture
def attacker_site() -> Iterator[str]:
    """A page on http://localhost:PORT: another site than the emulator's 127.0.0.1 (the review's X1)."""
    from static_page import serve_page

    with serve_page(b"<!doctype html><title>elsewhere</title><p>another site</p>") as port:
        yield f"http://localhost:{port}/"


def signed_in(emu: Emulator, username: str) -> httpx.Client:
    """A client holding the access cookie (from the sign-in link) and a session for ``username``."""
    auth = client(emu.urls.auth_url)
    link = auth.get(f"/login?key={KEY}")
    assert link.status_code == 303 and access_cookie(KEY, port_of(emu.urls.auth_url))[0] in auth.cookies
    done = auth.post("/login", data={"username": username, "returnUrl": "/"}, headers={"Origin": emu.urls.auth_url})
    assert done.status_code == 302 and "bk_session" in auth.cookies, done.text
    return auth


def a_username(emu: Emulator) -> str:
    assert emu.store is not None
    with emu.store.read() as db:
        return str(db.execute("SELECT username FROM users WHERE id > 0 AND status = 'active' ORDER BY id"
                              " LIMIT 1").fetchone()[0])


# --- E02: Host names (DNS rebinding) -----------------------------------------------------------

@pytest.mark.parametrize("origin", ["base_url", "auth_url", "orchestration_url"])
def test_e02_every_origin_refuses_a_foreign_host(emu: Emulator, origin: str) -> None:
    url = getattr(emu.urls, origin)
    port = port_of(url)
    path = {"base_url": "/api/v1/enums", "auth_url": "/login", "orchestration_url": "/v2/consumer/workflows"}[origin]
    for host in (f"rebind.evil.example:{port}", "evil.example", f"127.0.0.1:{port + 50}", f"localhost.evil.example:{port}"):
        answer = httpx.get(url + path, headers={"Host": host})
        assert answer.status_code == 403 and "not a name of this server" in answer.text, (host, answer.status_code)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert httpx.get(url + path, headers={"Host": host, "X-Blockkit-Access-Key": KEY}).status_code != 403


def test_e02_a_sign_in_with_a_foreign_host_sets_no_cookie(emu: Emulator) -> None:
    port = port_of(emu.urls.auth_url)
    answer = httpx.post(emu.urls.auth_url + "/login", data={"username": a_username(emu)},
                        headers={"Host": f"rebind.evil.example:{port}", "X-Blockkit-Access-Key": KEY})
    assert answer.status_code == 403 and "set-cookie" not in answer.headers


@pytest.mark.browser
def test_e02_a_rebound_name_reaches_nothing_in_chromium(emu: Emulator, browser: Any) -> None:
    # Chromium resolves rebind.test to 127.0.0.1, as a rebinding attacker's DNS would after the first lookup.
    from blockkit.dev.browser import CHROMIUM_ARGS, chromium_path

    rebinding = browser.browser_type.launch(executable_path=str(chromium_path()), headless=True,
                                            args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP rebind.test 127.0.0.1"])
    try:
        page = rebinding.new_page()
        for url in (emu.urls.auth_url + "/login", emu.urls.base_url + "/api/v1/enums"):
            rebound = url.replace("127.0.0.1", "rebind.test")
            answer = page.goto(rebound)
            assert answer is not None and answer.status == 403, (rebound, answer and answer.status)
            # A script of the rebound origin reads only the refusal, never the page.
            text = page.evaluate("async u => (await fetch(u)).text()", rebound)
            assert "not a name of this server" in text
    finally:
        rebinding.close()


def test_e02_blockkit_dev_emulator_origins_check_host_and_take_allowed_hosts(tmp_path: Path) -> None:
    with Emulator(EmulatorOptions(data=tmp_path / "d", allowed_hosts=("devbox.test",))) as dev_emulator:
        for url in dev_emulator.urls.as_dict().values():
            port = port_of(url)
            assert httpx.get(url + "/", headers={"Host": f"rebind.evil.example:{port}"}).status_code == 403
            assert httpx.get(url + "/", headers={"Host": f"devbox.test:{port}"}).status_code != 403


# --- E03: control routes -------------------------------------------------------------------------

def test_e03_a_simple_request_does_not_move_the_clock(emu: Emulator) -> None:
    before = clock_now(emu)
    plain = httpx.post(emu.urls.base_url + "/__emulator/clock", content=b'{"advance": 86400}',
                       headers={"Content-Type": "text/plain", "Origin": EVIL, "X-Blockkit-Access-Key": KEY})
    assert plain.status_code == 403
    form = httpx.post(emu.urls.base_url + "/__emulator/clock", content=b'{"advance": 86400}',
                      headers={"Content-Type": "text/plain", "X-Blockkit-Access-Key": KEY})
    assert form.status_code == 415
    assert clock_now(emu) - before < 3600


@pytest.mark.browser
def test_e03_a_cross_site_page_cannot_move_the_clock_in_chromium(emu: Emulator, browser: Any,
                                                               attacker_site: str) -> None:
    before = clock_now(emu)
    page = browser.new_page()
    try:
        page.goto(attacker_site)
        page.evaluate("""async u => { try { await fetch(u, {method: 'POST', mode: 'no-cors',
                         body: '{"advance":86400}'}); } catch (e) {} }""", emu.urls.base_url + "/__emulator/clock")
    finally:
        page.close()
    assert clock_now(emu) - before < 3600


# --- E04: media ----------------------------------------------------------------------------------

def test_e04_a_path_the_store_does_not_hold_is_404_and_draws_nothing(emu: Emulator) -> None:
    assert emu.data_dir is not None
    cache = emu.data_dir / "media-cache"
    answers = [httpx.get(f"{emu.urls.base_url}/__emulator/media/sec/dos/{n:05d}.png").status_code for n in range(20)]
    assert answers == [404] * 20
    assert not (cache / "sec").exists()
    assert emu.store is not None
    with emu.store.read() as db:
        (url,) = db.execute("SELECT url FROM images WHERE type = 'image' ORDER BY id LIMIT 1").fetchone()
    assert httpx.get(emu.urls.base_url + url).status_code == 200


def test_e04_the_media_cache_stays_under_its_cap(emu: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.emulator.services.orchestration import media

    assert emu.store is not None and emu.data_dir is not None
    monkeypatch.setattr(media, "MEDIA_CACHE_MAX_BYTES", 60_000)
    monkeypatch.setattr(media, "_BUDGET", media._CacheBudget())
    for n in range(12):
        url = stored_media(emu.store, f"capped/c{n}.png", width=256, height=256)
        assert httpx.get(emu.urls.base_url + url).status_code == 200
    total = sum(p.stat().st_size for p in (emu.data_dir / "media-cache").rglob("*") if p.is_file())
    assert total <= 60_000


# --- E05: request bodies ---------------------------------------------------------------------------

def raw_post(url: str, path: str, headers: dict[str, str], body_start: bytes = b"", *, chunked: bool = False,
             chunks: int = 0, method: str = "POST") -> bytes:
    """POST by hand: headers, then part of a body; the answer must come without the rest of it."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=8) as sock:
        lines = [f"{method} {path} HTTP/1.1", f"Host: {parts.netloc}", *(f"{k}: {v}" for k, v in headers.items())]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body_start)
        try:
            for _ in range(chunks):  # 64 KiB chunks, until the server answers (or 8 MiB)
                sock.sendall(b"10000\r\n" + b"a" * 0x10000 + b"\r\n")
        except OSError:
            pass  # the server answered and closed while we were still sending
        return sock.recv(65536)


@pytest.mark.parametrize(("origin", "path", "content_type"), [
    ("auth_url", "/login", "application/x-www-form-urlencoded"),
    ("auth_url", "/api/auth/oauth/token", "application/x-www-form-urlencoded"),
    ("base_url", "/__emulator/clock", "application/json"),
    ("orchestration_url", "/v2/consumer/workflows", "application/json"),
])
def test_e05_a_huge_declared_body_is_refused_before_it_is_read(emu: Emulator, origin: str, path: str,
                                                                content_type: str) -> None:
    from blockkit.emulator.services.orchestration.funds import create_api_key

    assert emu.store is not None and emu.clock is not None
    api_key = create_api_key(emu.store, emu.clock, a_username(emu))["api_key"]
    started = time.monotonic()
    answer = raw_post(getattr(emu.urls, origin), path, {"Content-Type": content_type, "Content-Length": str(400 << 20),
                                                          "X-Blockkit-Access-Key": KEY,
                                                          "Cookie": "=".join(access_cookie(KEY, port_of(getattr(emu.urls, origin)))),
                                                          "Authorization": f"Bearer {api_key}"})
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert time.monotonic() - started < 5


def _routes_taking_a_body() -> list[tuple[str, str, str]]:
    """Every (origin, method, path) the three apps serve with a method that carries a body, path
    parameters filled in: the routes added after E05 was first tested are held to it too."""
    import tempfile

    from starlette.routing import Mount, Route

    from blockkit.emulator.http.server import build_apps
    from blockkit.emulator.store import Store
    from blockkit.emulator.store.clock import Clock

    def walk(routes: list, prefix: str = "") -> Iterator[tuple[str, str]]:
        for route in routes:
            if isinstance(route, Mount):
                yield from walk(route.routes, prefix + route.path)
            elif isinstance(route, Route):
                for method in sorted((route.methods or set()) & {"POST", "PUT", "PATCH", "DELETE"}):
                    yield method, re.sub(r"\{[^}]*\}", "1", prefix + route.path)

    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "data") as store:
        apps = build_apps(store, Clock(store), EmulatorOptions())
        found = {(origin, method, path) for origin, app in zip(("base_url", "auth_url", "orchestration_url"), apps)
                 for method, path in walk(app.routes)}
    return sorted(found)


BODY_ROUTES = _routes_taking_a_body()


def test_e05_the_route_list_holds_the_routes_added_since() -> None:
    # The walk can see what it must: the device grant, the submission route, the block routes.
    paths = {path for _, _, path in BODY_ROUTES}
    assert {"/api/auth/oauth/device", "/api/auth/oauth/device-token", "/api/v1/blocks/submit-version",
            "/api/auth/oauth/token"} <= paths, sorted(paths)
    assert len(BODY_ROUTES) > 30


# Routes that read no body (a DELETE of the whole list): answered at once, the body left unread.
TAKES_NO_BODY = {("base_url", "DELETE", "/__emulator/faults")}


@pytest.fixture(scope="module")
def block_bearer(emu: Emulator) -> str:
    """A consented viewer's block token with every scope, so the block routes get as far as the body."""
    from types import SimpleNamespace

    from blockkit.emulator.services import blocktokens, consent

    assert emu.store is not None and emu.clock is not None
    with emu.store.read() as db:
        (user_id,) = db.execute("SELECT id FROM users WHERE id > 0 AND status = 'active' AND deleted_at IS NULL"
                                " ORDER BY id LIMIT 1").fetchone()
    blocktokens.register_block_instance(emu.store, emu.clock.iso(), instance_id="e05-body", block_id="e05-block",
                                        app_id="e05-app", scopes=["apps:storage:read", "apps:storage:write",
                                                                  "ai:write:budgeted", "buzz:read:self",
                                                                  "apps:storage:shared:read",
                                                                  "apps:storage:shared:write",
                                                                  "goods:purchase:self", "goods:read:self"],
                                        buzz_budget_per_gen=100)
    consent.grant_declared(emu.store, emu.clock, int(user_id), "e05-body")
    state = SimpleNamespace(store=emu.store, clock=emu.clock)
    return blocktokens.mint_block_token(state, instance_id="e05-body", user_id=int(user_id)).token  # type: ignore[arg-type]


@pytest.mark.parametrize(("origin", "method", "path"), BODY_ROUTES, ids=[f"{o}:{m}:{p}" for o, m, p in BODY_ROUTES])
def test_e05_every_route_that_takes_a_body_refuses_a_huge_one_unread(emu: Emulator, block_bearer: str, origin: str,
                                                                      method: str, path: str) -> None:
    """Security review 2, S22 (E05 on the routes added since): every route of the three origins,
    asked with a 400 MiB body declared and none of it sent, answers at once, without waiting for
    the body: never a 5xx, never a success (the few routes that read no body aside). Signed in as
    far as a request can be (the key, the cookie, a bearer, its own Origin; a block token on the
    block routes), the routes that read a body answer 413; the rest refuse before any body is due
    (a redirect of the legacy paths, a sign-in or method refusal, a missing console token, no such
    route). by-hash and the orchestration's tags keep the shapes those services give an oversized
    body (400)."""
    from blockkit.emulator.services.orchestration.funds import create_api_key

    assert emu.store is not None and emu.clock is not None
    api_key = create_api_key(emu.store, emu.clock, a_username(emu))["api_key"]
    # The submission routes take the author's API key; the other block routes a block token.
    by_key = ("/submit-version", "/dev-token", "/withdraw", "/submissions")
    bearer = block_bearer if path.startswith("/api/v1/blocks/") and path.removeprefix("/api/v1/blocks") not in by_key \
        else api_key
    url = getattr(emu.urls, origin)
    started = time.monotonic()
    answer = raw_post(url, path, {"Content-Type": "application/json", "Content-Length": str(400 << 20),
                                  "Origin": url, "X-Blockkit-Access-Key": KEY,
                                  "Cookie": "=".join(access_cookie(KEY, port_of(url))),
                                  "Authorization": f"Bearer {bearer}"}, method=method)
    elapsed = time.monotonic() - started
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    said = f"{method} {origin}{path}: {answer[:300]!r}"
    assert 300 <= status < 500 or (status == 200 and (origin, method, path) in TAKES_NO_BODY), said
    assert elapsed < 5, said
    if path.startswith(("/api/v1/blocks/", "/__emulator/clock", "/v2/consumer/workflows")) and status not in (404, 405):
        assert status == 413 or (status == 400 and path.endswith("/tags")), said


@pytest.mark.parametrize(("origin", "path"), [("auth_url", "/login"), ("base_url", "/__emulator/clock")])
def test_e05_a_chunked_body_is_cut_at_the_limit(emu: Emulator, origin: str, path: str) -> None:
    content_type = "application/json" if origin == "base_url" else "application/x-www-form-urlencoded"
    answer = raw_post(getattr(emu.urls, origin), path, {"Content-Type": content_type, "Transfer-Encoding": "chunked",
                                                        "X-Blockkit-Access-Key": KEY}, chunks=128)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


# --- E07: the access key ---------------------------------------------------------------------------

def test_e07_sign_in_asks_for_the_key(emu: Emulator) -> None:
    username = a_username(emu)
    stranger = client(emu.urls.auth_url)
    assert stranger.get("/login").status_code == 401
    refused = stranger.post("/login", data={"username": username}, headers={"Origin": emu.urls.auth_url})
    assert refused.status_code == 401 and "bk_session" not in stranger.cookies
    assert stranger.get("/login?key=not-the-key-at-all-123").status_code == 401
    # The developer's link: a cookie, then the page without the key in its URL.
    link = stranger.get(f"/login?key={KEY}&returnUrl=%2F")
    assert link.status_code == 303 and link.headers["location"] == "/login?returnUrl=%2F"
    assert "HttpOnly" in link.headers["set-cookie"] and "SameSite=Lax" in link.headers["set-cookie"]
    assert stranger.get("/login").status_code == 200
    signed_in(emu, username)


def test_e07_a_browser_without_the_key_gets_a_page_that_says_what_to_open(emu: Emulator) -> None:
    # Issue 37: a browser sent to sign in (the authorize URL opened first) met bare text, no link.
    stranger = client(emu.urls.auth_url, Accept="text/html,application/xhtml+xml,*/*;q=0.8")
    page = stranger.get("/login?returnUrl=%2Fapi%2Fauth%2Foauth%2Fauthorize%3Fx%3D%22%3E")
    assert page.status_code == 401 and page.headers["content-type"] == "text/html; charset=utf-8"
    text = page.text
    assert "<h1" in text and "sign in</strong> link" in text and f"{emu.urls.auth_url}/login?key=..." in text
    assert "sign_in_url" in text and "cannot sign in as you" in text  # what to open, and one sentence of why
    assert KEY not in text  # the page never holds the key itself
    # The app's returnUrl rides along, escaped, in the paste-the-key form.
    assert '<input type="hidden" name="returnUrl" value="/api/auth/oauth/authorize?x=&quot;&gt;">' in text
    wrong = stranger.get("/login?key=not-the-key-at-all-123")
    assert wrong.status_code == 401 and "<h1" in wrong.text and "another run's access key" in wrong.text
    # Programs keep their one-line answers.
    plain = client(emu.urls.auth_url).get("/login")
    assert plain.status_code == 401 and plain.headers["content-type"] == "text/plain; charset=utf-8"
    assert plain.text.startswith("this emulator asks for its access key")
    api = httpx.post(emu.urls.base_url + "/__emulator/clock", json={"advance": 0}, headers={"Accept": "text/html"})
    assert api.status_code == 401 and api.headers["content-type"] == "application/json"


@pytest.mark.browser
def test_e07_the_sign_in_link_signs_the_developer_in_chromium(emu: Emulator, browser: Any) -> None:
    username = a_username(emu)
    context = browser.new_context()
    try:
        page = context.new_page()
        refused = page.goto(emu.urls.auth_url + "/login")
        assert refused is not None and refused.status == 401
        # Issue 37: a page, not bare text: what to open, and why.
        assert page.locator("h1").inner_text() == "Sign in with this run's access key"
        assert "sign in link" in page.locator("#what").inner_text() and page.locator("#why").is_visible()
        page.goto(access_sign_in_url(emu))
        assert page.url == emu.urls.auth_url + "/login"  # the key is not left in the address bar
        with page.expect_navigation():
            page.locator(f"button[name=username][value='{username}']").click()
        assert [c for c in context.cookies() if c["name"] == "bk_session"]
    finally:
        context.close()


@pytest.mark.browser
def test_e07_the_key_page_takes_the_key_and_carries_on_in_chromium(emu: Emulator, browser: Any) -> None:
    username = a_username(emu)
    context = browser.new_context()
    try:
        page = context.new_page()
        refused = page.goto(emu.urls.auth_url + "/login?returnUrl=%2F")
        assert refused is not None and refused.status == 401
        page.fill("#key", KEY)
        with page.expect_navigation():
            page.locator("button[type=submit]").click()
        assert page.url == emu.urls.auth_url + "/login?returnUrl=%2F"  # signed in to the same page, no key in it
        with page.expect_navigation():
            page.locator(f"button[name=username][value='{username}']").click()
        assert [c for c in context.cookies() if c["name"] == "bk_session"]
    finally:
        context.close()


def access_sign_in_url(emu: Emulator) -> str:
    return str(emu.ready_info()["sign_in_url"])


def test_e07_the_mint_route_and_the_control_routes_ask_for_the_key(emu: Emulator) -> None:
    base = emu.urls.base_url
    body = {"blockInstanceId": "bi_dev_victim", "blockId": "b", "appId": "a"}
    assert httpx.post(base + "/api/v1/block-tokens", json=body, headers={"Origin": base}).status_code == 401
    keyed = httpx.post(base + "/api/v1/block-tokens", json=body, headers={"Origin": base, "X-Blockkit-Access-Key": KEY})
    assert keyed.status_code != 401
    assert httpx.post(base + "/__emulator/clock", json={"advance": 0}).status_code == 401
    assert httpx.post(base + "/__emulator/clock", json={"advance": 0},
                      headers={"X-Blockkit-Access-Key": KEY}).status_code == 200


def test_e07_e09_cli_start_prints_the_link_and_writes_a_private_ready_file(start_emulator: Any) -> None:
    started = start_emulator("--access-key", KEY)
    info = started.info
    assert info["access_key"] == KEY and info["sign_in_url"] == f"{info['auth_url']}/login?key={KEY}"
    assert stat.S_IMODE(started.ready_file.stat().st_mode) == 0o600
    assert httpx.post(info["auth_url"] + "/login", data={"username": "x"}).status_code == 401
    _code, out, _err = started.stop()
    assert f"sign in           {info['sign_in_url']}" in out


def test_e07_no_access_key_opts_out(start_emulator: Any) -> None:
    info = start_emulator().info  # the tests' helper passes --no-access-key
    assert "access_key" not in info
    assert httpx.get(info["auth_url"] + "/login").status_code == 200


# --- E08: file modes ------------------------------------------------------------------------------

def test_e08_data_dir_database_media_and_blobs_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    with Emulator(EmulatorOptions(data=data)) as emulator:
        assert emulator.store is not None
        url = stored_media(emulator.store, "modes/one.png")
        assert httpx.get(emulator.urls.base_url + url).status_code == 200
        from PIL import Image

        from blockkit.emulator.services.orchestration import media

        media.save_blob(emulator.store, "2025-01-01T00:00:00.000Z", None, Image.new("RGB", (4, 4)))
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        for name in ("emulator.sqlite3", "emulator.sqlite3-wal", "emulator.sqlite3-shm"):
            assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
        files = [p for p in (data / "media-cache").rglob("*") if p.is_file()] + list((data / "blobs").iterdir())
        assert files and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)


# --- E09: the ready file --------------------------------------------------------------------------

def test_e09_a_planted_link_at_the_temporary_name_is_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    target = tmp_path / "shared" / "emulator.json"
    target.parent.mkdir()
    # The old name was predictable: .<name>.<pid>.tmp.
    (target.parent / f".{target.name}.{os.getpid()}.tmp").symlink_to(victim)
    write_ready_file(target, {"base_url": "http://127.0.0.1:1"})
    assert victim.read_text() == "keep me"
    assert not target.is_symlink() and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_e09_a_world_writable_directory_of_another_user_is_refused(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "tmp-like"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    real_uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real_uid + 4242)  # as another user sees this directory
    with pytest.raises(EmulatorError, match="refusing to write the ready file"):
        write_ready_file(shared / "emulator.json", {})
    assert not (shared / "emulator.json").exists()


# --- E13: sign-in and sign-out CSRF --------------------------------------------------------------

def test_e13_a_cross_site_sign_in_or_sign_out_is_refused(emu: Emulator) -> None:
    username = a_username(emu)
    forged = client(emu.urls.auth_url, Cookie="=".join(access_cookie(KEY, port_of(emu.urls.auth_url))))
    answer = forged.post("/login", data={"username": username}, headers={"Origin": EVIL})
    assert answer.status_code == 403 and "set-cookie" not in answer.headers
    fetched = forged.post("/login", data={"username": username}, headers={"Sec-Fetch-Site": "cross-site"})
    assert fetched.status_code == 403 and "set-cookie" not in fetched.headers
    hidden = forged.post("/login", data={"username": username},
                         headers={"Origin": "null", "Sec-Fetch-Site": "cross-site"})
    assert hidden.status_code == 403 and "set-cookie" not in hidden.headers
    # Its own page under Referrer-Policy: no-referrer sends Origin: null, same-origin.
    own = forged.post("/login", data={"username": username}, headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"})
    assert own.status_code == 302
    victim = signed_in(emu, username)
    out = victim.post("/logout", headers={"Origin": EVIL})
    assert out.status_code == 403
    assert victim.post("/logout", headers={"Origin": emu.urls.base_url}).status_code == 403  # another port
    # Still signed in: the login page says so, and the developer's own sign-out works.
    assert victim.post("/logout", headers={"Origin": emu.urls.auth_url}).status_code == 302


@pytest.mark.browser
def test_e13_a_cross_site_form_cannot_sign_the_browser_in_chromium(tmp_path: Path, browser: Any,
                                                                   attacker_site: str) -> None:
    # No access key here, so only the Origin check stands between the page and a session.
    with Emulator(EmulatorOptions(data=tmp_path / "d")) as open_emulator:
        username = a_username(open_emulator)
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(attacker_site)
            with page.expect_navigation():
                page.evaluate("""([action, user]) => { const f = document.createElement('form');
                    f.method = 'POST'; f.action = action;
                    const i = document.createElement('input'); i.name = 'username'; i.value = user;
                    f.appendChild(i); document.body.appendChild(f); f.submit(); }""",
                              [open_emulator.urls.auth_url + "/login", username])
            assert "not from" in page.content()
            assert not [c for c in context.cookies() if c["name"] == "bk_session"]
            # The emulator's own sign-in page still signs in.
            page.goto(open_emulator.urls.auth_url + "/login")
            with page.expect_navigation():
                page.locator(f"button[name=username][value='{username}']").click()
            assert [c for c in context.cookies() if c["name"] == "bk_session"]
        finally:
            context.close()


# --- E20: bad input is 4xx, not 500 ------------------------------------------------------------------

def test_e20_an_over_long_media_path_is_404(emu: Emulator) -> None:
    answer = httpx.get(emu.urls.base_url + "/__emulator/media/" + "a" * 5044 + ".png")
    assert answer.status_code == 404


@pytest.mark.parametrize("route", ["app-storage/list", "shared-storage/list"])
def test_e20_a_malformed_cursor_is_400(route: str, tmp_path: Path) -> None:
    from blockkit.emulator.services import appstorage
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store

    with Store.open(tmp_path) as store:
        clock = Clock(store)
        run = appstorage.storage_list if route.startswith("app") else appstorage.shared_list
        for cursor in ("\u202e", "%E2%80%AE", "not base64!", "x" * 500):
            answer = run(store, clock, "block", 1, None, cursor)
            assert answer.get("error") == appstorage.BAD_CURSOR, (cursor, answer)
