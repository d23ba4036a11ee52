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

    def json(self, path: str, **params: Any) -> Any:
        response = self.get(path, **params)
        assert response.status_code == 200, f"{path} {params}: {response.status_code} {response.text[:500]}"
        return response.json()


_ENV: MediaEnv | None = None


def _make() -> MediaEnv:
    from blockkit.emulator import seed
    from blockkit.emulator.clock import Clock
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.server import build_apps
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
