"""An emulator served in-process (starlette TestClient) over a store the test fills itself.

For tests that need states the seed does not have, or a clock of their own: build the
store with ``new_store(tmp_path)``, add rows with the store's own functions or SQL,
then ``client(store)`` gives a TestClient on the catalogue app whose every response is
checked against the OpenAPI document (the same hook as the ``api`` fixture).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contract import conformance_hook
from starlette.testclient import TestClient

from blockkit.emulator.store.clock import Clock
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.http.server import build_apps
from blockkit.emulator.state import Urls
from blockkit.emulator.store import Store

BASE_URL = "http://testserver"
URLS = Urls(base_url=BASE_URL, auth_url="http://testserver:1", orchestration_url="http://testserver:2")
STAMP = "2025-06-01T00:00:00.000Z"


def new_store(path: Path) -> Store:
    """An empty, migrated store with the base models table filled (what every version references)."""
    from blockkit.emulator import facts

    store = Store.open(path, check=False)
    with store.write() as db:
        if not db.execute("SELECT 1 FROM base_models LIMIT 1").fetchone():
            db.executemany("INSERT INTO base_models (name, position, ecosystem, kind, active) VALUES (?, ?, ?, ?, ?)",
                           [(b.name, i, b.ecosystem, b.kind, int(b.active)) for i, b in enumerate(facts.BASE_MODELS)])
    return store


def add_user(store: Store, user_id: int, username: str, *, tier: str = "free", status: str = "active",
             moderator: bool = False, browsing_level: int = 1, deleted: bool = False,
             subscription: str | None = None, image: str | None = None) -> None:
    with store.write() as db:
        db.execute("INSERT INTO users (id, username, tier, status, is_moderator, browsing_level, image, created_at,"
                   " deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (user_id, username, tier, status, int(moderator), browsing_level, image, STAMP,
                    STAMP if deleted else None))
        if subscription is not None:
            db.execute("INSERT INTO subscriptions (user_id, product, tier, status, started_at) VALUES (?, ?, ?, ?, ?)",
                       (user_id, subscription, tier, "active", STAMP))


def client(store: Store, *, clock: Clock | None = None, sfw_only: bool = False, check: bool = True) -> Any:
    clock = clock or Clock(store)
    catalogue, _auth, _orch = build_apps(store, clock, EmulatorOptions(sfw_only=sfw_only), URLS)
    test_client = TestClient(catalogue, base_url=BASE_URL, raise_server_exceptions=False)
    if check:
        test_client.event_hooks = {"request": [], "response": [conformance_hook]}
    return test_client


def seed_into(path: Path, seed: int = 1, scale: str = "small") -> Store:
    """A store holding the seed's data (in ``path``), for tests that change it or move its clock."""
    from blockkit.emulator.seed import ensure_seeded

    store = Store.open(path, check=False)
    ensure_seeded(store, seed, scale)
    return store


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def mint(store: Store, user_id: int, *, scope: int = 1, ttl: int = 3600, clock: Clock | None = None) -> str:
    from blockkit.emulator.store import tokens

    clock = clock or Clock(store)
    with store.write() as db:
        return tokens.issue_access_token(db, user_id=user_id, scope=scope, now=clock.now(), ttl_seconds=ttl)
