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
