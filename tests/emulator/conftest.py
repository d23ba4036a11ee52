"""Fixtures for the emulator: a real ``blockkit emulator start`` subprocess, an in-process one, stores.

- ``emulator`` (session): one subprocess started as a user would (``python -m blockkit
  emulator start --port 0 --ready-file ...``); yields the ready-file dict (base_url,
  auth_url, orchestration_url, pid, data). Tests must not change its data.
- ``start_emulator`` (function): a factory for tests that need their own process
  (signals, --data, --sfw-only); every process it starts is stopped at the end.
- ``live_emulator`` (function): an in-process :class:`Emulator` on a fresh temporary
  data directory, for tests that reach into the store while it serves.
- ``seeded_store`` (session): the small seed in a store, read-only by convention.

HTTP and subprocess helpers are in ``emulator_helpers.py`` (``get_json``, ``post_json``,
``blockkit``).

Contract fixtures (the catalogue API against ``openapi.json``, see ``contract.py``):

- ``api`` (session): an ``httpx.Client`` on ``base_url`` whose every response must conform
  to the OpenAPI document (the conformance hook); ``raw_api`` without the hook.
- ``landmarks`` (session): the seed's named fixtures of the running ``emulator``.
- ``member``, ``free_user`` and their ``member_token``, ``free_token`` (session): access
  tokens from a confidential client the user owns (``client add`` + client_credentials).

Models-family fixtures: ``mint`` (``mint(user_id, scope=1, ttl=3600)``: a token written
straight into the running store) and ``store_of`` (a connection to it, to compute what to
expect); ``seeded_users`` (the CLI's list of users).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest
from contract import conformance_hook
from emulator_helpers import Started, start_process


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    started = start_process(tmp_path_factory.mktemp("emulator") / "ready.json")
    try:
        yield started.info
    finally:
        started.stop()


@pytest.fixture
def start_emulator(tmp_path: Path) -> Iterator[Callable[..., Started]]:
    running: list[Started] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Started:
        started = start_process(tmp_path / f"ready-{len(running)}.json", *args, env=env)
        running.append(started)
        return started

    yield start
    for started in running:
        if started.process.poll() is None:
            started.stop()


@pytest.fixture
def live_emulator(tmp_path: Path) -> Iterator[Any]:
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    with Emulator(EmulatorOptions(data=tmp_path / "data")) as emu:
        yield emu


@pytest.fixture(scope="session")
def seeded_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from blockkit.emulator.seed import ensure_seeded
    from blockkit.emulator.store import Store

    store = Store.open(tmp_path_factory.mktemp("seeded"))
    ensure_seeded(store, 1, "small")
    try:
        yield store
    finally:
        store.close()


# --- contract fixtures -------------------------------------------------------------------


@pytest.fixture(scope="session")
def landmarks(emulator: dict[str, Any]) -> dict[str, Any]:
    """The seed's named fixtures (ids, names, hashes), read from the running emulator's store."""
    from blockkit.emulator.seed import landmarks as read_landmarks
    from blockkit.emulator.store import Store

    store = Store.open(Path(emulator["data"]), check=False)
    try:
        return read_landmarks(store)
    finally:
        store.close()


# A session fixture that fails is run again for every test that asks for it; these run
# subprocesses, so remember the first failure and repeat its message at once.
_FAILED: dict[str, str] = {}


def _once(key: str, make: Any) -> Any:
    if key in _FAILED:
        pytest.fail(_FAILED[key])
    try:
        return make()
    except BaseException as exc:  # pytest.fail raises a BaseException subclass
        _FAILED[key] = f"{key}: {exc}"
        raise


def _cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "blockkit", "emulator", *args], capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        pytest.fail(f"blockkit emulator {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


@pytest.fixture(scope="session")
def seeded_users(emulator: dict[str, Any]) -> list[dict[str, Any]]:
    """``blockkit emulator users --format json``: id, username, tier, status of every seeded user."""
    users = json.loads(_cli("users", "--data", str(emulator["data"]), "--format", "json"))
    if isinstance(users, dict):  # the CLI prints {"users": [...]}
        users = users.get("users")
    assert isinstance(users, list) and users
    return users


def token_for(emulator: dict[str, Any], username: str) -> str:
    """An access token for ``username`` from the OAuth provider: ``client add`` (a confidential
    client the user owns) and a client_credentials grant at the token endpoint."""
    client = json.loads(_cli(
        "client", "add", "--name", f"tests-{username}", "--redirect-uri", "http://127.0.0.1/callback",
        "--confidential", "--owner", username, "--data", str(emulator["data"]),
    ))
    response = httpx.post(
        f"{str(emulator['auth_url']).rstrip('/')}/api/auth/oauth/token",
        data={"grant_type": "client_credentials", "client_id": client["client_id"],
              "client_secret": client["client_secret"]},
        timeout=30.0,
    )
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


@pytest.fixture(scope="session")
def member(landmarks: dict[str, Any]) -> dict[str, Any]:
    """An active gold member (the seed's ``member`` landmark)."""
    return dict(landmarks["member"])


@pytest.fixture(scope="session")
def free_user(landmarks: dict[str, Any]) -> dict[str, Any]:
    """An active user without membership (the seed's ``free_user`` landmark)."""
    return dict(landmarks["free_user"])


@pytest.fixture(scope="session")
def member_token(emulator: dict[str, Any], request: pytest.FixtureRequest) -> str:
    return _once("member token", lambda: token_for(emulator, request.getfixturevalue("member")["username"]))


@pytest.fixture(scope="session")
def free_token(emulator: dict[str, Any], request: pytest.FixtureRequest) -> str:
    return _once("free token", lambda: token_for(emulator, request.getfixturevalue("free_user")["username"]))


@pytest.fixture(scope="session")
def base_url(emulator: dict[str, Any]) -> str:
    return str(emulator["base_url"]).rstrip("/")


@pytest.fixture(scope="session")
def api(base_url: str) -> Iterator[httpx.Client]:
    """A client on base_url whose every response must conform to openapi.json."""
    with httpx.Client(base_url=base_url, timeout=30.0, event_hooks={"response": [conformance_hook]}) as client:
        yield client


@pytest.fixture(scope="session")
def raw_api(base_url: str) -> Iterator[httpx.Client]:
    """A client without the hook: for tests that assert on non-conformance themselves."""
    with httpx.Client(base_url=base_url, timeout=30.0) as client:
        yield client


# --- tokens minted straight into the running emulator's store (store/tokens.py) -----------------

@pytest.fixture(scope="session")
def mint(emulator: dict[str, Any]) -> Iterator[Any]:
    """``mint(user_id, scope=1, ttl=3600) -> raw token``: an access token for any seeded user, at once.

    Written into the running emulator's store (WAL lets it), dated by the emulator's clock.
    """
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.store import Store
    from blockkit.emulator.store import tokens

    store = Store.open(Path(emulator["data"]), check=False)

    def make(user_id: int, scope: int = 1, ttl: int = 3600) -> str:
        with store.write() as db:
            return tokens.issue_access_token(db, user_id=user_id, scope=scope, now=Clock(store).now(),
                                             ttl_seconds=ttl)

    try:
        yield make
    finally:
        store.close()


@pytest.fixture(scope="session")
def store_of(emulator: dict[str, Any]) -> Iterator[Any]:
    """A read connection to the running emulator's store, for tests that compute what to expect."""
    from blockkit.emulator.store import Store

    store = Store.open(Path(emulator["data"]), check=False)
    try:
        yield store
    finally:
        store.close()


# The media-family tests' in-process catalogue (tests/emulator/media_env.py).
from media_env import media  # noqa: E402,F401

# The OAuth tests' own in-process emulator (tests/emulator/oauth_env.py).
from oauth_env import oauth, oauth_emulator  # noqa: E402,F401
