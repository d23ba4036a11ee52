"""The local platform for test suites: ``running(...)``, and the handle that tests drive.

``with blockkit.emulator.running(seed=1) as platform:`` starts an emulator in this
process (three loopback origins on free ports), and stops it on exit. The handle
(:class:`LocalPlatform`) gives the URLs, the environment a child process needs, and
the helpers tests use: sign in, mint tokens, register clients, move the clock, set
a balance, read the ledger, and **reset**.

Why in-process (and not a subprocess): a reset is then a direct SQLite backup from
an in-memory template into the live database (about 10-20 ms on the small seed)
plus a rebuild of the three apps, so that no in-memory state (rate-limit windows,
caches) outlives it; the helpers write through the store's own functions instead
of an HTTP control surface that would need its own credentials; and the emulator
cannot outlive the test process that owns it (no orphan, whatever happens). Under
pytest-xdist every worker is its own process, so every worker has its own emulator
on its own free ports. Code that must not share the test's interpreter uses
``blockkit emulator exec`` (a separate process) instead.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blockkit.emulator.errors import EmulatorError

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock
    from blockkit.emulator.runtime import Emulator
    from blockkit.emulator.state import Urls
    from blockkit.emulator.store import Store

# The names the environment of a child process carries (``emulator exec`` and ``LocalPlatform.env``).
ENV_BASE_URL = "BLOCKKIT_BASE_URL"
ENV_AUTH_URL = "BLOCKKIT_AUTH_URL"
ENV_ORCHESTRATION_URL = "BLOCKKIT_ORCHESTRATION_URL"
ENV_ACCESS_TOKEN = "BLOCKKIT_ACCESS_TOKEN"
ENV_ACCESS_KEY = "BLOCKKIT_ACCESS_KEY"
SEEDED = "seeded"


def environment(urls: Urls, *, access_token: str | None = None, access_key: str | None = None) -> dict[str, str]:
    """The variables a process needs to reach the emulator (and, with ``access_token``, to act as a user).

    The published catalogue clients the tests run (civitapy, civitai-hub) read no base-URL
    variable: civitai-hub reads ``CIVITAI_HOST`` but accepts only its own list of https
    hosts. Both read ``CIVITAI_TOKEN`` for the bearer token, so an access token is also
    given under that name.
    """
    env = {
        ENV_BASE_URL: urls.base_url,
        ENV_AUTH_URL: urls.auth_url,
        ENV_ORCHESTRATION_URL: urls.orchestration_url,
    }
    if access_key is not None:  # the emulator's own key (access.py): X-Blockkit-Access-Key
        env[ENV_ACCESS_KEY] = access_key
    if access_token is not None:
        env[ENV_ACCESS_TOKEN] = access_token
        env["CIVITAI_TOKEN"] = access_token
    return env


@dataclass(frozen=True)
class User:
    id: int
    username: str


class LocalPlatform:
    """A running emulator, seen from a test. Made by :func:`running` (or the pytest plugin)."""

    def __init__(self, emulator: Emulator) -> None:
        self._emulator = emulator
        self._states: dict[str, sqlite3.Connection] = {}
        self._lock = threading.Lock()
        self.save_state(SEEDED)

    # --- where it is ---------------------------------------------------------------

    @property
    def urls(self) -> Urls:
        return self._emulator.urls

    @property
    def base_url(self) -> str:
        return self.urls.base_url

    @property
    def api_url(self) -> str:
        """The catalogue API root, ``{base_url}/api/v1``."""
        return f"{self.urls.base_url}/api/v1"

    @property
    def auth_url(self) -> str:
        return self.urls.auth_url

    @property
    def orchestration_url(self) -> str:
        return self.urls.orchestration_url

    @property
    def env(self) -> dict[str, str]:
        """The environment variables that point a child process at this emulator."""
        return environment(self.urls, access_key=self._emulator.options.access_key)

    @property
    def access_key(self) -> str | None:
        """This start's access key (None when started with ``access_key=None``)."""
        return self._emulator.options.access_key

    @property
    def headers(self) -> dict[str, str]:
        """The headers that carry the access key (``X-Blockkit-Access-Key``): send them on ``/login``,
        ``/__emulator/*`` writes and the block-token mint route; empty without a key."""
        from blockkit.emulator.http.access import KEY_HEADER

        key = self.access_key
        return {} if key is None else {KEY_HEADER.decode(): key}

    @property
    def sign_in_url(self) -> str | None:
        """The link that signs a browser in (it carries the key), or None without a key."""
        from blockkit.emulator.http.access import sign_in_url

        key = self.access_key
        return None if key is None else sign_in_url(self.auth_url, key)

    @property
    def data_dir(self) -> Path:
        assert self._emulator.data_dir is not None
        return self._emulator.data_dir

    @property
    def store(self) -> Store:
        if self._emulator.store is None:
            raise EmulatorError("the emulator is stopped")
        return self._emulator.store

    @property
    def clock(self) -> Clock:
        assert self._emulator.clock is not None
        return self._emulator.clock

    @property
    def seed(self) -> int:
        return self._emulator.options.seed

    @property
    def scale(self) -> str:
        return self._emulator.options.scale

    # --- states ----------------------------------------------------------------------

    def save_state(self, name: str) -> None:
        """Keep the current state under ``name`` (in memory), for :meth:`reset` to return to."""
        snapshot = sqlite3.connect(":memory:", check_same_thread=False)
        source = sqlite3.connect(self.store.path)
        try:
            source.backup(snapshot)
        finally:
            source.close()
        with self._lock:
            old = self._states.pop(name, None)
            self._states[name] = snapshot
        if old is not None:
            old.close()

    @property
    def states(self) -> list[str]:
        return sorted(self._states)

    def reset(self, state: str | Path | None = None) -> None:
        """Return to the seeded state, to a state saved with :meth:`save_state`, or to an export directory.

        Everything goes back: rows, the clock, sessions, tokens, balances. The apps are
        rebuilt, so no in-memory state (rate-limit windows, caches) survives either.
        """
        if isinstance(state, Path):
            self._import(state)
            return
        name = SEEDED if state is None else state
        with self._lock:
            snapshot = self._states.get(name)
            if snapshot is None:
                known = ", ".join(sorted(self._states))
                raise EmulatorError(f"no saved state called {name!r} (saved: {known})")
            self._emulator.restore_from(snapshot)

    def _import(self, source: Path) -> None:
        from blockkit.emulator.transfer import import_export

        import_export(self.store, source, replace=True)
        self._emulator.restore_from(None)

    # --- people and credentials ---------------------------------------------------------

    def user(self, username: str) -> User:
        """A user by name (see ``blockkit emulator users``)."""
        from blockkit.emulator.store import users as users_store

        with self.store.read() as db:
            found = users_store.find_by_username(db, username)
        if found is None or found.deleted:
            raise EmulatorError(f"no such user: {username}")
        return User(found.id, found.username)

    def users(self) -> list[User]:
        from blockkit.emulator.store import users as users_store

        with self.store.read() as db:
            return [User(u.id, u.username) for u in users_store.list_users(db) if u.id > 0 and not u.deleted]

    def sign_in(self, username: str) -> dict[str, str]:
        """A signed-in session on auth_url for ``username``: the cookies to send (``{"bk_session": ...}``)."""
        from blockkit.emulator.http.oauth.web import SESSION_COOKIE
        from blockkit.emulator.store import oauth as oauth_store

        user = self.user(username)
        with self.store.write() as db:
            raw = oauth_store.start_session(db, user.id, now=self.clock.now())
        return {SESSION_COOKIE: raw}

    def oauth_token(self, username: str, *, scope: int = 1, ttl: int = 3600) -> str:
        """An access token for ``username`` with the scope bitmask ``scope``, as the provider issues them."""
        from blockkit.emulator.store import tokens

        user = self.user(username)
        with self.store.write() as db:
            return tokens.issue_access_token(db, user_id=user.id, scope=scope, now=self.clock.now(), ttl_seconds=ttl)

    def register_client(self, *, name: str = "test client", redirect_uris: list[str] | None = None,
                        confidential: bool = False, allowed_scopes: int | None = None,
                        allowed_origins: list[str] | None = None, owner: str | None = None) -> dict[str, Any]:
        """Register an OAuth client; returns ``{"client_id", "client_secret"?}``."""
        from blockkit.emulator.services.oauth import scopes
        from blockkit.emulator.services.oauth.clients import register_client

        registered = register_client(
            self.store, self.clock, name=name, redirect_uris=redirect_uris or ["http://127.0.0.1:9000/callback"],
            confidential=confidential, allowed_scopes=scopes.FULL if allowed_scopes is None else allowed_scopes,
            allowed_origins=allowed_origins, owner=owner)
        return registered.as_dict()

    def api_key(self, username: str) -> str:
        """An orchestration API key for ``username``."""
        from blockkit.emulator.services.orchestration.funds import create_api_key

        return str(create_api_key(self.store, self.clock, username)["api_key"])

    def block_token(self, username: str | None, *, scopes: list[str], block_id: str = "test-block",
                    app_id: str = "test-app", instance_id: str | None = None, slot_id: str = "app.page",
                    model_id: int | None = None, buzz_budget_per_gen: int | None = None,
                    installer: str | None = None, max_browsing_level: int | None = None,
                    consented: bool = True) -> str:
        """A block token for ``username`` (None: a signed-out viewer) with the block scopes ``scopes``.

        The block instance is installed first (by ``installer``, default the viewer), as the host would.
        ``consented``: the viewer granted the block its scopes (as an install records); False gives a
        signed-in viewer's first-visit token, which holds only the consent-exempt scopes.
        """
        from blockkit.emulator.services import blocktokens, consent
        from blockkit.emulator.state import EmulatorState

        viewer = None if username is None else self.user(username)
        installed_by = self.user(installer).id if installer else (viewer.id if viewer else None)
        instance = instance_id or f"bi_{block_id}"[:64]
        blocktokens.register_block_instance(
            self.store, self.clock.iso(), instance_id=instance, block_id=block_id, app_id=app_id, scopes=scopes,
            slot_id=slot_id, model_id=model_id, buzz_budget_per_gen=buzz_budget_per_gen, installed_by=installed_by)
        if consented and viewer is not None:
            consent.grant_declared(self.store, self.clock, viewer.id, instance)
        state = EmulatorState(store=self.store, clock=self.clock, options=self._emulator.options, urls=self.urls)
        minted = blocktokens.mint_block_token(state, instance_id=instance, user_id=viewer.id if viewer else None,
                                              max_browsing_level=max_browsing_level)
        return minted.token

    # --- time and money ---------------------------------------------------------------

    def now(self) -> datetime:
        return self.clock.now()

    def advance_clock(self, seconds: float) -> datetime:
        """Move the one clock of all three origins forward; returns the new now."""
        return self.clock.advance(seconds)

    def balance(self, username: str) -> dict[str, int]:
        """The user's Buzz pools, ``{"blue": N, "green": N, "yellow": N}``."""
        from blockkit.emulator.services import buzz

        return buzz.balance(self.store, self.clock, self.user(username).id)

    def set_balance(self, username: str, pool: str, amount: int) -> None:
        """Set one pool to ``amount``; the change is a ledger entry (kind ``adjustment``), so the ledger still adds up."""
        from blockkit.emulator.services import buzz
        from blockkit.emulator.store import buzz as buzz_store

        if pool not in buzz_store.POOLS:
            raise EmulatorError(f"pool must be one of {', '.join(buzz_store.POOLS)}")
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise EmulatorError("amount must be an integer, 0 or more")
        user = self.user(username)
        with self.store.write() as db:
            buzz.open_accounts(db, user.id, self.clock.iso())
            current = buzz_store.balances(db, user.id)[pool]
            if amount != current:
                buzz_store.move(db, user.id, pool, amount - current, "adjustment", None, "set by a test",
                                self.clock.iso())

    def fail_next(self, kind: str, *, times: int = 1, username: str | None = None) -> None:
        """Make the next ``times`` uses of a service fail (``services/faults.py``): ``"workflow-fails"``
        (the next workflow fails in its first step and is refunded) or ``"storage-write-fails"`` (the
        next app-storage write is refused). For ``username`` only, or anyone; ``times=0`` disarms."""
        from blockkit.emulator.services import faults

        try:
            faults.arm(self.store, kind, times, self.user(username).id if username is not None else None)
        except faults.FaultError as exc:
            raise EmulatorError(str(exc)) from None

    def ledger(self, username: str, *, limit: int = 100, pool: str | None = None) -> list[dict[str, Any]]:
        """The user's Buzz ledger, newest first: ``{id, pool, amount, kind, reference, description, created_at}``."""
        from blockkit.emulator.store import buzz as buzz_store

        with self.store.read() as db:
            return buzz_store.transactions(db, self.user(username).id, limit, None, pool)


class _NewKey:
    """``running()``'s default access key: a new one per start."""

    def __repr__(self) -> str:
        return "a new key"


NEW_KEY: Any = _NewKey()


@contextmanager
def running(*, seed: int = 1, scale: str = "small", data: Path | None = None, sfw_only: bool = False,
            host: str = "127.0.0.1", port: int = 0, access_key: str | None = NEW_KEY) -> Iterator[LocalPlatform]:
    """Run the local platform for the ``with`` block: ``with running() as platform: ...``.

    Without ``data`` the state lives in a temporary directory removed at exit. Like ``blockkit
    emulator start``, each start has its own access key (``platform.access_key``; ``platform.env``
    and ``platform.headers`` carry it), so no other local account signs in or moves the clock
    while the tests run; ``access_key=None`` turns it off, a string chooses it.
    """
    from blockkit.emulator.http.access import new_access_key
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    key = new_access_key() if access_key is NEW_KEY else access_key
    emulator = Emulator(EmulatorOptions(data=data, host=host, port=port, seed=seed, scale=scale, sfw_only=sfw_only,
                                        access_key=key))
    emulator.start()
    try:
        yield LocalPlatform(emulator)
    finally:
        emulator.stop()
