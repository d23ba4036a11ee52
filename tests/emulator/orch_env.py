"""An in-process emulator for the orchestration, Buzz, goods and storage tests.

``orch(tmp_path)`` builds a fresh store with a few users (free, member, banned, muted,
creator), the three apps over it and TestClients on the catalogue and orchestration
origins, plus API keys for each user.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inproc import URLS, add_user, new_store
from PIL import Image
from starlette.testclient import TestClient

from blockkit.emulator.store.clock import Clock
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.services.orchestration.funds import create_api_key
from blockkit.emulator.http.server import build_apps
from blockkit.emulator.store import Store

FREE, MEMBER, BANNED, MUTED, OWNER, POOR = 1, 2, 3, 4, 5, 6


@dataclass
class Orch:
    store: Store
    clock: Clock
    api: TestClient          # the catalogue origin
    orch: TestClient         # the orchestration origin
    keys: dict[int, str]

    def auth(self, user_id: int = FREE) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[user_id]}"}

    def advance(self, seconds: float) -> None:
        assert self.api.post("/__emulator/clock", json={"advance": seconds}).status_code == 200


def make(tmp_path: Path) -> Orch:
    store = new_store(tmp_path)
    add_user(store, FREE, "free_fiona")
    add_user(store, MEMBER, "member_max", tier="gold", subscription="Gold Membership")
    add_user(store, BANNED, "banned_bo", status="banned")
    add_user(store, MUTED, "muted_mo", status="muted")
    add_user(store, OWNER, "owner_olga", tier="silver", subscription="Silver Membership")
    add_user(store, POOR, "poor_pat")
    clock = Clock(store)
    catalogue, _auth, orchestration = build_apps(store, clock, EmulatorOptions(), URLS)
    api = TestClient(catalogue, base_url=URLS.base_url, raise_server_exceptions=False)
    orch = TestClient(orchestration, base_url=URLS.orchestration_url, raise_server_exceptions=False)
    keys = {uid: create_api_key(store, clock, name)["api_key"] for uid, name in
            ((FREE, "free_fiona"), (MEMBER, "member_max"), (BANNED, "banned_bo"), (MUTED, "muted_mo"),
             (OWNER, "owner_olga"), (POOR, "poor_pat"))}
    return Orch(store, clock, api, orch, keys)


def png(width: int, height: int, colour: tuple[int, int, int] = (200, 30, 60), *, split: bool = False) -> bytes:
    """A PNG; with ``split`` the left half is ``colour`` and the right half blue."""
    image = Image.new("RGB", (width, height), colour)
    if split:
        image.paste((0, 0, 255), (width // 2, 0, width, height))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def image_of(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == status and body["title"] and body["detail"]
    return body
