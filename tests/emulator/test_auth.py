"""auth.py: bearer tokens to Callers, the verifier registry, store/tokens.py and `blockkit emulator token`."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inproc import add_user, client, new_store

from blockkit.emulator.http import auth
from blockkit.emulator.store.clock import Clock, format_timestamp
from blockkit.emulator.store import Store, tokens


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = new_store(tmp_path)
    add_user(store, 10, "alice", tier="gold", subscription="Gold Membership", browsing_level=31)
    add_user(store, 11, "bob")
    add_user(store, 12, "gone", deleted=True)
    add_user(store, 13, "lapsed", tier="bronze")  # a paid tier without an active subscription
    yield store
    store.close()


def mint(store: Store, user_id: int, *, scope: int = 1, ttl: int = 3600, clock: Clock | None = None) -> str:
    clock = clock or Clock(store)
    with store.write() as db:
        return tokens.issue_access_token(db, user_id=user_id, scope=scope, now=clock.now(), ttl_seconds=ttl)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_me_answers_the_token_owner(store: Store) -> None:
    body = client(store).get("/api/v1/me", headers=bearer(mint(store, 10))).json()
    subject = body.pop("subject")  # a client-less token: the platform's apiKey subject (bearer-token.ts)
    assert subject["type"] == "apiKey" and isinstance(subject["id"], int)
    assert body == {"id": 10, "username": "alice", "tier": "gold", "status": "active", "isMember": True,
                    "subscriptions": ["Gold Membership"], "tokenScope": 1, "buzzLimit": None}


def test_only_the_hash_is_stored(store: Store) -> None:
    raw = mint(store, 11)
    with store.read() as db:
        stored = [tuple(r) for r in db.execute("SELECT token_hash FROM oauth_access_tokens")]
    assert stored == [(tokens.hash_token(raw),)]
    assert raw not in stored[0][0]
    assert len(raw) >= 43


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": ""},
    {"Authorization": "Bearer"},
    {"Authorization": "Bearer "},
    {"Authorization": "Basic YWxpY2U6eA=="},
    {"Authorization": "Bearer two words"},
    [(b"Authorization", "Bearer tok\u00e9n".encode())],
    {"Authorization": "Bearer " + "a" * 5000},
    {"Authorization": "Bearer unknown-token-value"},
], ids=["none", "empty", "scheme only", "scheme and space", "basic", "two words", "non-ascii", "5000 chars",
        "unknown"])
def test_me_refuses_missing_malformed_and_unknown_tokens_alike(store: Store, headers: object) -> None:
    response = client(store).get("/api/v1/me", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"error": "Unauthorized"}


def test_two_authorization_headers_are_malformed(store: Store) -> None:
    token = mint(store, 10)
    response = client(store).get("/api/v1/me", headers=[("Authorization", f"Bearer {token}"),
                                                        ("Authorization", f"Bearer {token}")])
    assert response.status_code == 401


def test_scheme_is_case_insensitive(store: Store) -> None:
    assert client(store).get("/api/v1/me", headers={"Authorization": f"bearer {mint(store, 11)}"}).status_code == 200


def test_token_expires_by_the_emulator_clock(store: Store) -> None:
    clock = Clock(store)
    token = mint(store, 11, clock=clock)
    api = client(store, clock=clock)
    clock.advance(3599)
    assert api.get("/api/v1/me", headers=bearer(token)).status_code == 200
    clock.advance(1)
    response = api.get("/api/v1/me", headers=bearer(token))
    assert response.status_code == 401 and response.json() == {"error": "Unauthorized"}


def test_revoked_token_is_refused(store: Store) -> None:
    token = mint(store, 11)
    api = client(store)
    assert api.get("/api/v1/me", headers=bearer(token)).status_code == 200
    with store.write() as db:
        assert tokens.revoke_access_token(db, token, now=Clock(store).now()) is True
        assert tokens.revoke_access_token(db, token, now=Clock(store).now()) is False  # already revoked
    assert api.get("/api/v1/me", headers=bearer(token)).status_code == 401


def test_deleted_users_token_is_refused(store: Store) -> None:
    assert client(store).get("/api/v1/me", headers=bearer(mint(store, 12))).status_code == 401


def test_paid_tier_without_subscription_is_not_a_member_for_the_vault(store: Store) -> None:
    token = mint(store, 13)
    body = client(store).get("/api/v1/me", headers=bearer(token)).json()
    assert body["isMember"] is True and body["subscriptions"] == []  # /me: tier is not free
    caller = resolve(store, token)
    assert caller.tier == "bronze" and not caller.is_member  # the vault: an active membership


def resolve(store: Store, token: str) -> auth.Caller:
    from inproc import URLS

    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.state import EmulatorState

    return auth.resolve_token(token, EmulatorState(store, Clock(store), EmulatorOptions(), URLS))


def test_caller_fields_from_an_oauth_token(store: Store) -> None:
    caller = resolve(store, mint(store, 10, scope=16385))
    assert (caller.user_id, caller.username, caller.kind, caller.scope, caller.browsing_level) == (
        10, "alice", "oauth", 16385, 31)
    assert caller.is_member and not caller.anonymous and caller.max_browsing_level is None
    assert caller.token_ctx["client_id"] is None and isinstance(caller.token_ctx["token_id"], int)
    assert auth.ANONYMOUS.anonymous and auth.ANONYMOUS.scope == 0 and auth.ANONYMOUS.kind == "anonymous"


@pytest.mark.parametrize("reason,prepare", [
    ("unknown", lambda store: "no-such-token"),
    ("revoked", "revoked"),
    ("expired", "expired"),
    ("user", "deleted"),
])
def test_token_rejected_carries_its_reason(store: Store, reason: str, prepare: object) -> None:
    if callable(prepare):
        token = prepare(store)
    elif prepare == "revoked":
        token = mint(store, 11)
        with store.write() as db:
            tokens.revoke_access_token(db, token, now=Clock(store).now())
    elif prepare == "expired":
        token = mint(store, 11, ttl=0)
    else:
        token = mint(store, 12)
    with pytest.raises(auth.TokenRejected) as caught:
        resolve(store, token)
    assert caught.value.reason == reason and caught.value.status == 401


def test_registered_verifier_is_asked_first_and_may_pass(store: Store) -> None:
    seen: list[str] = []

    def block_verifier(raw: str, state: object) -> auth.Caller | None:
        seen.append(raw)
        if not raw.startswith("blk."):
            return None  # not a block token: the next verifier decides
        return auth.Caller(user_id=11, username="bob", kind="block", block_scopes=frozenset({"user:read:self"}),
                           max_browsing_level=1)

    auth.register_verifier(block_verifier)
    auth.register_verifier(block_verifier)  # idempotent
    try:
        assert auth.verifiers().count(block_verifier) == 1
        assert auth.verifiers()[-1] is auth.verify_access_token
        api = client(store)
        assert api.get("/api/v1/me", headers=bearer("blk.abc")).json()["username"] == "bob"
        opaque = mint(store, 10)
        assert api.get("/api/v1/me", headers=bearer(opaque)).json()["username"] == "alice"
        assert seen == ["blk.abc", opaque]
    finally:
        auth._verifiers.remove(block_verifier)


def test_block_caller_clamps_to_its_ceiling() -> None:
    caller = auth.Caller(user_id=1, kind="block", max_browsing_level=3)
    assert caller.clamp(31) == 3
    assert auth.Caller(user_id=1).clamp(31) == 31


def test_query_token_only_where_allowed(store: Store) -> None:
    from starlette.requests import Request

    token = mint(store, 11)

    def request(query: str, headers: list[tuple[bytes, bytes]] | None = None) -> Request:
        return Request({"type": "http", "method": "GET", "path": "/", "headers": headers or [],
                        "query_string": query.encode()})

    assert auth.bearer_token(request(f"token={token}")) is None
    assert auth.bearer_token(request(f"token={token}"), allow_query_token=True) == token
    assert auth.bearer_token(request(f"token={token}", [(b"authorization", b"Bearer hdr")]),
                             allow_query_token=True) == "hdr"  # the header wins
    with pytest.raises(auth.TokenRejected):
        auth.bearer_token(request("token=a&token=b"), allow_query_token=True)


# --- the CLI ----------------------------------------------------------------------------------

def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blockkit", "emulator", *args], capture_output=True, text=True,
                          timeout=60, env=os.environ.copy(), check=False)


def test_cli_token_mints_a_working_token(store: Store, tmp_path: Path) -> None:
    done = run_cli("token", "--user", "alice", "--scope", "3", "--data", str(tmp_path))
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert set(printed) == {"access_token", "expires_in", "user_id", "scope"}
    assert printed["expires_in"] == 3600 and printed["user_id"] == 10 and printed["scope"] == 3
    assert client(store).get("/api/v1/me", headers=bearer(printed["access_token"])).json()["id"] == 10


def test_cli_token_lasts_by_the_emulator_clock(store: Store, tmp_path: Path) -> None:
    clock = Clock(store)
    clock.advance(86_400)  # persisted: the CLI reads the offset
    printed = json.loads(run_cli("token", "--user", "bob", "--data", str(tmp_path)).stdout)
    with store.read() as db:
        row = tokens.lookup_access_token(db, printed["access_token"])
    assert row is not None and row.scope == 1
    assert row.expires_at > format_timestamp(Clock(store).after(3500))  # a day ahead of the wall clock


@pytest.mark.parametrize("args,needle", [
    (("--user", "nobody"), "no such user"),
    (("--user", "gone"), "no such user"),
    (("--user", "alice", "--scope", "-1"), "--scope"),
])
def test_cli_token_refuses_bad_input_in_one_line(store: Store, tmp_path: Path, args: tuple[str, ...],
                                                 needle: str) -> None:
    done = run_cli("token", *args, "--data", str(tmp_path))
    assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr


def test_cli_token_without_data_is_exit_2(tmp_path: Path) -> None:
    done = run_cli("token", "--user", "alice", "--data", str(tmp_path / "none"))
    assert done.returncode == 2 and "no emulator data" in done.stderr
    assert not (tmp_path / "none").exists()


def test_tokens_table_refuses_a_raw_token(store: Store) -> None:
    with store.write() as db, pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO oauth_access_tokens (token_hash, user_id, scope, created_at, expires_at)"
                   " VALUES ('short', 10, 1, 'x', 'y')")
