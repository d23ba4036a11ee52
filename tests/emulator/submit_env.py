"""The submission tests' own running emulator (``blockkit emulator start`` with an access key) and helpers.

``submit_platform`` (module scope, via the test modules): a :class:`SubmitPlatform` over one
subprocess with ``--data``, so the tests can mint keys and tokens into its store while it serves
and call the control routes with its access key. Tests change its data, so it is never the shared
``emulator`` fixture.
"""

from __future__ import annotations

import base64
import io
import json
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from emulator_helpers import Started, start_process

ACCESS_KEY = "submit-tests-access-key-0123456789"
APPS_SUBMIT = 1 << 25


def bundle(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def manifest_bundle(block_id: str, version: str = "1.0.0", **extra: str | bytes) -> bytes:
    manifest = {"blockId": block_id, "version": version, "name": f"Block {block_id}"}
    return bundle({"block.manifest.json": json.dumps(manifest), "index.html": "<p>hi</p>", **extra})


def encoded(data: bytes) -> dict[str, str]:
    return {"bundleBase64": base64.b64encode(data).decode()}


@dataclass
class SubmitPlatform:
    started: Started
    data: Path

    @property
    def base_url(self) -> str:
        return str(self.started.info["base_url"])

    def call(self, method: str, path: str, body: Any = None, *, key: str | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
        sent = {"Content-Type": "application/json", **(headers or {})}
        if key is not None:
            sent["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read()), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null"), dict(exc.headers)

    def control(self, path: str, body: Any, *, with_key: bool = True) -> tuple[int, Any, dict[str, str]]:
        headers = {"X-Blockkit-Access-Key": ACCESS_KEY} if with_key else {}
        return self.call("POST", "/__emulator" + path, body, headers=headers)

    def _store(self) -> Any:
        from blockkit.emulator.store import Store

        return Store.open(self.data, check=False)

    def user(self, *, moderator: bool, status: str = "active") -> str:
        """A seeded user's name: a (non-system) moderator, or an ordinary user of ``status``."""
        from blockkit.emulator.store import users

        with self._store() as store, store.read() as db:
            for user in users.list_users(db):
                if user.id > 0 and not user.deleted and user.is_moderator == moderator and user.status == status:
                    return user.username
        raise AssertionError(f"no seeded user with moderator={moderator} status={status}")

    def api_key(self, username: str) -> str:
        from blockkit.emulator.services.orchestration.funds import create_api_key
        from blockkit.emulator.store.clock import Clock

        with self._store() as store:
            return str(create_api_key(store, Clock(store), username)["api_key"])

    def oauth_token(self, username: str, scope: int) -> str:
        from blockkit.emulator.store import tokens, users
        from blockkit.emulator.store.clock import Clock

        with self._store() as store, store.write() as db:
            user = users.find_by_username(db, username)
            assert user is not None
            return tokens.issue_access_token(db, user_id=user.id, scope=scope, now=Clock(store).now(),
                                             client_id=None)

    def advance(self, seconds: int) -> None:
        status, body, _ = self.control("/clock", {"advance": seconds})
        assert status == 200, body


def start_submit_platform(tmp: Path) -> SubmitPlatform:
    data = tmp / "data"
    started = start_process(tmp / "ready.json", "--data", str(data), "--access-key", ACCESS_KEY)
    return SubmitPlatform(started, data)


def platform_fixture(name: str) -> Any:
    """A module's running local platform for the submission tests (its own data directory, named
    ``name``), stopped after the module's last test."""

    @pytest.fixture(scope="module")
    def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SubmitPlatform]:
        started = start_submit_platform(tmp_path_factory.mktemp(name))
        try:
            yield started
        finally:
            started.started.stop()

    return platform


@pytest.fixture(scope="module")
def author(platform: SubmitPlatform) -> str:
    """A moderator who authors the module's blocks (import it beside ``platform = platform_fixture(...)``)."""
    return platform.user(moderator=True)


@pytest.fixture
def key(platform: SubmitPlatform, author: str) -> str:
    """A fresh personal API key of the author (each test its own rate-limit bucket)."""
    return platform.api_key(author)


def set_version(block: Path, version: str) -> None:
    """Write ``version`` into the block's manifest."""
    path = block / "block.manifest.json"
    manifest = json.loads(path.read_text())
    manifest["version"] = version
    path.write_text(json.dumps(manifest, indent=2))


def submit_lower_then_higher(block: Path, env: dict[str, str]) -> str:
    """After 0.1.0 was approved: 0.0.9 is refused with the platform's 400 (BK401), and 0.2.0 goes in
    pending; returns the pending request's id."""
    from emulator_helpers import blockkit

    set_version(block, "0.0.9")
    lower = blockkit("submit", str(block), "--yes", env=env)
    assert lower.returncode == 2, lower.stderr
    assert lower.stderr.strip().splitlines()[-1] == (
        'blockkit submit: 400: BK401: version "0.0.9" is lower than the previous "0.1.0"')
    set_version(block, "0.2.0")
    second = blockkit("submit", str(block), "--yes", "--format", "json", env=env)
    assert second.returncode == 0, second.stderr
    return str(json.loads(second.stdout)["publishRequestId"])
