"""One in-process catalogue over a seeded store plus the media fixture rows (media_data).

The media tests import the ``media`` fixture from here. The store, clock and app are
made once per test session (a module-level singleton: the fixture is imported into
several modules, and each import would otherwise build its own). Requests go
through starlette's TestClient, an httpx client, with the conformance hook: every
answer is checked against openapi.json.
"""

from __future__ import annotations

import atexit
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

with warnings.catch_warnings():
    # Starlette 1.x suggests httpx2 for its TestClient; httpx is what the contract hook speaks.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from contract import conformance_hook
from media_data import MediaData, build

BASE_URL = "http://testserver"


@dataclass
class MediaEnv:
    store: Any
    clock: Any
    data: MediaData
    landmarks: dict[str, Any]
    client: httpx.Client      # conformance-checked
    raw: httpx.Client         # unchecked (to look at what the hook would refuse)
    base_url: str = BASE_URL

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.client.get(f"/api/v1{path}", params=params)

    def json(self, path: str, headers: dict[str, str] | None = None, **params: Any) -> Any:
        response = self.client.get(f"/api/v1{path}", params=params, headers=headers)
        assert response.status_code == 200, f"{path} {params}: {response.status_code} {response.text[:500]}"
        return response.json()

    def token(self, user_id: int) -> str:
        """A real access token for ``user_id`` (the OAuth token store), valid for a day of emulator time."""
        from blockkit.emulator.store import tokens

        with self.store.write() as db:
            return tokens.issue_access_token(db, user_id=user_id, scope=1, now=self.clock.now(), ttl_seconds=86_400)

    def bearer(self, user_id: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(user_id)}"}

    def walk(self, path: str, headers: dict[str, str] | None = None, max_pages: int = 2000,
             **params: Any) -> list[dict[str, Any]]:
        """Every page of a cursor list, following metadata.nextCursor until it is absent."""
        pages = []
        cursor = None
        for _ in range(max_pages):
            query = dict(params, **({"cursor": cursor} if cursor is not None else {}))
            page = self.json(path, headers=headers, **query)
            pages.append(page)
            cursor = page["metadata"].get("nextCursor")
            if cursor is None:
                return pages
        raise AssertionError(f"{path} {params}: still a nextCursor after {max_pages} pages")

    def sql(self, query: str, *args: Any) -> list[Any]:
        with self.store.read() as db:
            return [tuple(row) for row in db.execute(query, args)]


_ENV: MediaEnv | None = None


def _make() -> MediaEnv:
    from blockkit.emulator import seed
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.http.server import build_apps
    from blockkit.emulator.state import Urls
    from blockkit.emulator.store import Store

    folder = Path(tempfile.mkdtemp(prefix="blockkit-media-tests-"))
    store = Store.open(folder)
    seed.seed_store(store, 1, "small")
    data = build(store)
    clock = Clock(store)
    options = EmulatorOptions(data=folder)
    catalogue, _auth, _orchestration = build_apps(store, clock, options,
                                                  Urls(BASE_URL, "http://auth.invalid", "http://orch.invalid"))
    client = TestClient(catalogue, base_url=BASE_URL)
    client.event_hooks = {"response": [conformance_hook]}
    raw = TestClient(catalogue, base_url=BASE_URL)

    def close() -> None:
        client.close()
        raw.close()
        store.close()
        import shutil

        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(close)
    return MediaEnv(store=store, clock=clock, data=data, landmarks=seed.landmarks(store), client=client, raw=raw)


@pytest.fixture(scope="session")
def media() -> MediaEnv:
    global _ENV
    if _ENV is None:
        _ENV = _make()
    return _ENV
