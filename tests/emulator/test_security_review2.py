"""The security review of 2026-12-02 (S01–S18), each row's reproduction against a served emulator.

One in-process :class:`Emulator` with an access key serves the module (real sockets behind the
same guard as ``blockkit emulator start``); rows that need their own start make one.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.runtime import Emulator

KEY = "test-access-key-review-2-0123"
EVIL = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}


@pytest.fixture(scope="module")
def emu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with Emulator(EmulatorOptions(data=tmp_path_factory.mktemp("sec2") / "data", access_key=KEY)) as emulator:
        yield emulator


def advance(emu: Emulator, seconds: float) -> None:
    answer = httpx.post(emu.urls.base_url + "/__emulator/clock", json={"advance": seconds},
                        headers={"X-Blockkit-Access-Key": KEY})
    assert answer.status_code == 200, answer.text


def rate_rows(emu: Emulator) -> tuple[int, int]:
    """(rows, bytes of keys) in the rate-limit table."""
    assert emu.store is not None
    with emu.store.read() as db:
        count, size = db.execute("SELECT count(*), coalesce(sum(length(key)), 0) FROM rate_limits").fetchone()
    return int(count), int(size)


# --- S01: the OAuth rate-limit table ------------------------------------------------------------

def test_s01_made_up_client_ids_are_not_counted(emu: Emulator) -> None:
    advance(emu, 61)  # a fresh window
    before = rate_rows(emu)
    with httpx.Client(base_url=emu.urls.auth_url, headers=EVIL, timeout=30) as http:
        for _ in range(20):
            padded = secrets.token_hex(30_000)
            answer = http.post("/api/auth/oauth/device", data={"client_id": padded})
            assert answer.status_code == 400 and answer.json()["error"] == "invalid_client"
            answer = http.post("/api/auth/oauth/device-token", data={
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": "x",
                "client_id": padded})
            assert answer.status_code == 400 and answer.json()["error"] == "invalid_client"
    after = rate_rows(emu)
    assert after[0] <= before[0] and after[1] <= max(before[1], 1000)


def test_s01_the_table_keeps_the_current_window_only_and_bounds_its_keys(emu: Emulator) -> None:
    from blockkit.emulator.store import oauth as store

    assert emu.store is not None
    with emu.store.write() as db:
        for index in range(50):
            store.hit(db, "token", f"old-{index}", now=1_000_000.0, window=60)
        store.hit(db, "token", "k" * 60_000, now=1_000_000.0, window=60)
        count, longest = db.execute("SELECT count(*), max(length(key)) FROM rate_limits"
                                    " WHERE bucket = 'token'").fetchone()
        assert count >= 51 and longest <= store.RATE_KEY_MAX
        store.hit(db, "token", "new", now=1_000_000.0 + 120, window=60)  # a later window
        rows = db.execute("SELECT key FROM rate_limits WHERE bucket = 'token'").fetchall()
        assert [r[0] for r in rows] == ["new"]
        # the same long key counts in one row
        first, _ = store.hit(db, "token", "q" * 500, now=1_000_000.0 + 120, window=60)
        second, _ = store.hit(db, "token", "q" * 500, now=1_000_000.0 + 120, window=60)
        assert (first, second) == (1, 2)


# --- S09, S10, S12: export and import -------------------------------------------------------------

def _export(emu: Emulator, target: Any) -> dict[str, Any]:
    from blockkit.emulator import transfer

    assert emu.store is not None
    return transfer.export(emu.store, target)


def test_s12_an_export_is_private(emu: Emulator, tmp_path: Any) -> None:
    import os
    import stat

    target = tmp_path / "export"
    _export(emu, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    for folder, dirs, files in os.walk(target):
        for name in dirs:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o700, name
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600, name


def test_s09_a_target_swapped_for_a_link_is_left_alone(emu: Emulator, tmp_path: Any) -> None:
    from blockkit.emulator.errors import EmulatorError
    from blockkit.emulator.execrun import check_export_target, export_replacing

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    final = tmp_path / "shared" / "final"
    final.mkdir(parents=True)
    checked = check_export_target(final)
    final.rmdir()  # what another account did while the command ran
    final.symlink_to(victim)
    assert emu.store is not None
    with pytest.raises(EmulatorError, match="changed while the command ran"):
        export_replacing(emu.store, checked)
    assert (victim / "precious.txt").read_text() == "keep me"
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
    assert final.is_symlink()


def test_s09_an_earlier_export_replaced_by_another_directory_is_not_deleted(emu: Emulator, tmp_path: Any) -> None:
    from blockkit.emulator.errors import EmulatorError
    from blockkit.emulator.execrun import check_export_target, export_replacing

    final = tmp_path / "final"
    _export(emu, final)
    checked = check_export_target(final)
    final.rename(tmp_path / "moved")
    final.mkdir()
    (final / "precious.txt").write_text("keep me")
    assert emu.store is not None
    with pytest.raises(EmulatorError, match="changed while the command ran"):
        export_replacing(emu.store, checked)
    assert (final / "precious.txt").read_text() == "keep me"
    # unchanged, an earlier export is replaced as before
    again = check_export_target(tmp_path / "moved")
    export_replacing(emu.store, again)
    assert (tmp_path / "moved" / "manifest.json").is_file()


def test_s09_a_target_in_a_folder_others_may_write_is_refused(tmp_path: Any) -> None:
    import os

    from blockkit.emulator.errors import EmulatorError
    from blockkit.emulator.execrun import check_export_target

    if os.geteuid() != 0:
        pytest.skip("needs a folder owned by another account (run as root)")
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chown(shared, 65534, 65534)
    os.chmod(shared, 0o1777)
    with pytest.raises(EmulatorError, match="other accounts may write there"):
        check_export_target(shared / "final")
    with pytest.raises(EmulatorError, match="symbolic link"):
        (tmp_path / "link").symlink_to(tmp_path)
        check_export_target(tmp_path / "link")


def _hostile_export(emu: Emulator, tmp_path: Any) -> tuple[Any, dict[str, Any]]:
    import hashlib
    import json

    source = tmp_path / "export"
    manifest = _export(emu, source)
    data = b"\x89PNG-ten!!"
    name = "blobs/00000000-0000-4000-8000-000000000000.png"
    (source / "files" / "blobs").mkdir(parents=True, exist_ok=True)
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (source / "manifest.json").write_text(json.dumps(manifest))
    outside = tmp_path / "outside.png"
    outside.write_bytes(data)
    return source, {"name": name, "data": data, "outside": outside}


def _import_into(tmp_path: Any, source: Any) -> None:
    from blockkit.emulator import transfer
    from blockkit.emulator.store import Store

    store = Store.open(tmp_path / f"data-{secrets.token_hex(4)}")
    try:
        transfer.import_export(store, source)
    finally:
        store.close()


def test_s10_an_export_file_that_is_a_link_is_refused(emu: Emulator, tmp_path: Any) -> None:
    from blockkit.emulator.transfer import TransferError

    source, blob = _hostile_export(emu, tmp_path)
    (source / "files" / blob["name"]).symlink_to(blob["outside"])
    with pytest.raises(TransferError, match="symbolic link"):
        _import_into(tmp_path, source)
    (source / "files" / blob["name"]).unlink()
    (source / "files" / blob["name"]).write_bytes(blob["data"])
    _import_into(tmp_path, source)  # the same export with the file itself imports
    users = source / "users.jsonl"
    users.rename(tmp_path / "users.jsonl")
    users.symlink_to(tmp_path / "users.jsonl")
    with pytest.raises(TransferError, match="symbolic link"):
        _import_into(tmp_path, source)


def test_s10_devices_fifos_and_oversized_files_are_refused_unread(emu: Emulator, tmp_path: Any) -> None:
    import os

    from blockkit.emulator.transfer import TransferError

    source, blob = _hostile_export(emu, tmp_path)
    path = source / "files" / blob["name"]
    os.mkfifo(path)  # read whole, a FIFO waits for ever
    with pytest.raises(TransferError, match="not a regular file"):
        _import_into(tmp_path, source)
    path.unlink()
    path.write_bytes(blob["data"] + b"\0" * 100_000)  # larger than the manifest says
    with pytest.raises(TransferError, match="larger than the manifest says"):
        _import_into(tmp_path, source)
    path.unlink()
    path.symlink_to("/dev/zero")
    with pytest.raises(TransferError, match="symbolic link"):
        _import_into(tmp_path, source)


# --- S02 / R05: what failed is visible --------------------------------------------------------------

def test_r05_the_failed_callbacks_are_listed_with_the_key_only(emu: Emulator) -> None:
    url = emu.urls.base_url + "/__emulator/callbacks"
    assert httpx.get(url).status_code == 401
    listed = httpx.get(url, params={"state": "failed"}, headers={"X-Blockkit-Access-Key": KEY})
    assert listed.status_code == 200 and listed.json() == {"events": []}
    assert httpx.get(url, params={"state": "lost"}, headers={"X-Blockkit-Access-Key": KEY}).status_code == 400


# --- S18: the key need not be on the command line -------------------------------------------------

def test_s18_the_key_comes_from_a_file_or_the_environment(tmp_path: Any) -> None:
    import sys

    from emulator_helpers import subprocess_env

    key = "key-from-a-file-0123456789"
    key_file = tmp_path / "key"
    key_file.write_text(key + "\n")
    script = "import os; print(os.environ['BLOCKKIT_ACCESS_KEY'])"
    import subprocess

    def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "blockkit", "emulator", "exec", *args, "--", sys.executable,
                               "-c", script], capture_output=True, text=True, timeout=120,
                              env=subprocess_env(**env))

    from_file = run("--access-key-file", str(key_file))
    assert from_file.returncode == 0, from_file.stderr
    assert from_file.stdout.strip() == key
    from_env = run(BLOCKKIT_EMULATOR_ACCESS_KEY="key-from-the-environment-01")
    assert from_env.returncode == 0, from_env.stderr
    assert from_env.stdout.strip() == "key-from-the-environment-01"
    missing = run("--access-key-file", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "--access-key-file" in missing.stderr and "Traceback" not in missing.stderr
    helped = subprocess.run([sys.executable, "-m", "blockkit", "emulator", "start", "--help"], capture_output=True,
                            text=True, timeout=60, env=subprocess_env())
    assert "(ps)" in " ".join(helped.stdout.split())


# --- S05: the browser's access cookie, which every 127.0.0.1 port receives -----------------------------

def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _sign_in_cookies(emu: Emulator) -> dict[str, str]:
    """What the developer's browser keeps from the printed sign-in link."""
    with httpx.Client(base_url=emu.urls.auth_url, timeout=10) as browser:
        link = browser.get(f"/login?key={KEY}")
        assert link.status_code == 303
        return {name: value for name, value in browser.cookies.items() if value}


def _listener_receives(cookies: dict[str, str]) -> str:
    """A server on another 127.0.0.1 port (another account's), sent what a browser sends it: every cookie."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []

    def accept() -> None:
        conn, _ = server.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            got.append(data)
            conn.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    # Cookies ignore ports (RFC 6265 §8.5): a jar for 127.0.0.1 sends them to this port too.
    jar = httpx.Cookies()
    for name, value in cookies.items():
        jar.set(name, value, domain="127.0.0.1")
    with httpx.Client(cookies=jar, timeout=10) as browser:
        browser.get(f"http://127.0.0.1:{port}/")
    thread.join(10)
    server.close()
    [request] = got
    [line] = [ln for ln in request.decode("latin-1").split("\r\n") if ln.lower().startswith("cookie:")]
    return line.split(":", 1)[1].strip()


def test_s05_the_cookie_another_port_receives_holds_no_key(emu: Emulator) -> None:
    from blockkit.emulator.http.access import access_cookie

    cookies = _sign_in_cookies(emu)
    # One cookie per origin of this run, each bound to its port; none is the key or holds it.
    expected = {access_cookie(KEY, _port(url))[0] for url in emu.urls.as_dict().values()}
    assert expected <= set(cookies) and "bk_access" not in cookies
    received = _listener_receives(cookies)
    assert "bk_access_" in received and KEY not in received
    for value in cookies.values():
        assert KEY not in value and value != KEY


def test_s05_a_cookie_replayed_as_the_key_or_to_another_origin_grants_nothing(emu: Emulator) -> None:
    cookies = _sign_in_cookies(emu)
    received = _listener_receives(cookies)
    pairs = dict(pair.strip().split("=", 1) for pair in received.split(";"))
    auth_name = f"bk_access_{_port(emu.urls.auth_url)}"
    base_port = _port(emu.urls.base_url)
    base = emu.urls.base_url
    # The auth origin's cookie, offered as the key (header) or to the catalogue's control routes and mint route:
    # refused. The review's replay used the cookie's value as X-Blockkit-Access-Key.
    for value in pairs.values():
        answer = httpx.post(base + "/__emulator/clock", json={"advance": 86400},
                            headers={"X-Blockkit-Access-Key": value, "Origin": base})
        assert answer.status_code == 401
        answer = httpx.post(base + "/api/v1/block-tokens", json={"blockInstanceId": "bi_x", "blockId": "b", "appId": "a"},
                            headers={"X-Blockkit-Access-Key": value, "Origin": base})
        assert answer.status_code == 401
    # The auth origin's cookie renamed for the catalogue's port: not the catalogue's cookie.
    forged = f"bk_access_{base_port}={pairs[auth_name]}"
    answer = httpx.post(base + "/__emulator/clock", json={"advance": 86400}, headers={"Cookie": forged, "Origin": base})
    assert answer.status_code == 401
    # The old cookie, holding the key, is taken no more either.
    answer = httpx.post(base + "/__emulator/clock", json={"advance": 86400}, headers={"Cookie": f"bk_access={KEY}",
                                                                                      "Origin": base})
    assert answer.status_code == 401


def test_s05_a_cookie_of_this_run_is_worth_nothing_to_another_run(emu: Emulator, tmp_path: Any) -> None:
    # Another emulator (another run, or another account's) on its own ports: this run's cookies are not its own.
    cookies = _sign_in_cookies(emu)
    header = "; ".join(f"{n}={v}" for n, v in cookies.items())
    with Emulator(EmulatorOptions(data=tmp_path / "other", access_key="another-runs-key-0123456789")) as other:
        answer = httpx.get(other.urls.auth_url + "/login", headers={"Cookie": header})
        assert answer.status_code == 401
        base = other.urls.base_url
        answer = httpx.post(base + "/__emulator/clock", json={"advance": 1}, headers={"Cookie": header, "Origin": base})
        assert answer.status_code == 401


def test_s05_a_write_with_the_cookie_must_come_from_the_emulators_own_page(emu: Emulator) -> None:
    cookies = _sign_in_cookies(emu)
    header = "; ".join(f"{n}={v}" for n, v in cookies.items())
    base = emu.urls.base_url
    for headers in ({}, {"Origin": "http://127.0.0.1:9"}, {"Origin": "null", "Sec-Fetch-Site": "same-site"},
                    {"Sec-Fetch-Site": "cross-site"}):
        answer = httpx.post(base + "/__emulator/clock", json={"advance": 0}, headers={"Cookie": header, **headers})
        assert answer.status_code == 403, (headers, answer.text)
    # The emulator's own pages (any of its origins), as a browser says it: the cookie is the browser's credential.
    for headers in ({"Origin": base}, {"Origin": emu.urls.auth_url}):
        answer = httpx.post(base + "/__emulator/clock", json={"advance": 0}, headers={"Cookie": header, **headers})
        assert answer.status_code == 200, (headers, answer.text)
    # A read with it (the sign-in page an OAuth client's redirect opens) needs no more.
    assert httpx.get(emu.urls.auth_url + "/login", headers={"Cookie": header}).status_code == 200
    # Programs keep the header, with no Origin.
    answer = httpx.post(base + "/__emulator/clock", json={"advance": 0}, headers={"X-Blockkit-Access-Key": KEY})
    assert answer.status_code == 200


def test_s05_an_unparsable_cookie_of_another_server_does_not_hide_ours(emu: Emulator) -> None:
    cookies = _sign_in_cookies(emu)
    name = f"bk_access_{_port(emu.urls.auth_url)}"
    header = f'other="a\\"b;c; junk; {name}={cookies[name]}; x={{"j":1}}'
    assert httpx.get(emu.urls.auth_url + "/login", headers={"Cookie": header}).status_code == 200
