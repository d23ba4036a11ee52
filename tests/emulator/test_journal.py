"""The request journal (issue 36, item 6): every request to the three origins, and each refusal's reason in words.

- the ring itself (bounded, filters, redaction helpers) without a server;
- refusals made the way a client makes them, against the OAuth tests' emulator (``oauth``) and a
  live in-process one (``live_emulator``), each journal entry's reason checked word for word, and the
  wire answer checked to be the platform's as before;
- tokens and secrets never appear in the journal;
- ``GET /__emulator/journal``: the access key, other origins' pages refused, filters, the long poll;
- ``blockkit emulator log``: --ready-file, --data, --status, --format json, --follow.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from emulator_helpers import blockkit, subprocess_env
from oauth_env import AUTHORIZE, HTML, REDIRECT, REVOKE, OAuthEnv, pkce

from blockkit.emulator import journal as journal_mod
from blockkit.emulator.journal import REDACTED, Journal

KEY = "journal-test-key-0123456789"


def read_journal(base_url: str, key: str | None = None, **params: Any) -> dict[str, Any]:
    headers = {"X-Blockkit-Access-Key": key} if key else {}
    answer = httpx.get(base_url + "/__emulator/journal", params=params, headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.json()


def newest(base_url: str, **params: Any) -> dict[str, Any]:
    entries = read_journal(base_url, **params)["entries"]
    assert entries, params
    return entries[-1]


def mark(base_url: str) -> int:
    return int(read_journal(base_url, limit=1)["last_id"])


def entries_since(base_url: str, since: int, **params: Any) -> list[dict[str, Any]]:
    return read_journal(base_url, since=since, limit=2000, **params)["entries"]


def only(entries: list[dict[str, Any]], path: str) -> dict[str, Any]:
    found = [e for e in entries if e["path"] == path]
    assert len(found) == 1, [(e["method"], e["path"], e["status"]) for e in entries]
    return found[0]


# --- the ring, without a server ----------------------------------------------------------------

def test_the_ring_keeps_the_newest_entries_only() -> None:
    ring = Journal(3)
    for n in range(7):
        ring.add({"origin": "catalogue", "status": 200 + n, "path": f"/{n}", "who": {}})
    assert len(ring) == 3 and ring.last_id == 7
    assert [e["id"] for e in ring.entries()] == [5, 6, 7]
    assert [e["id"] for e in ring.entries(since=5)] == [6, 7]
    assert [e["id"] for e in ring.entries(limit=2)] == [6, 7]          # without since: the newest
    assert [e["id"] for e in ring.entries(since=0, limit=2)] == [5, 6]  # with since: onward from it


def test_status_filters() -> None:
    assert journal_mod.status_matches(404, "4xx") and journal_mod.status_matches(404, "404")
    assert journal_mod.status_matches(503, "4xx,5xx") and not journal_mod.status_matches(200, "4xx")
    assert not journal_mod.status_matches(401, "404")
    assert journal_mod.valid_status_filter("4xx,503") and not journal_mod.valid_status_filter("bad")


def test_redaction_of_queries_forms_json_and_headers() -> None:
    assert journal_mod.redact_pairs("code=abc&state=s1&client_secret=xyz&refresh_token=r") == \
        f"code={REDACTED}&state=s1&client_secret={REDACTED}&refresh_token={REDACTED}"
    text = '{"access_token":"AAA","token_type":"Bearer","refresh_token":"RRR","expires_in":3600,"name":"x"}'
    assert journal_mod.redact_text(text, "application/json") == \
        f'{{"access_token":"{REDACTED}","token_type":"Bearer","refresh_token":"{REDACTED}","expires_in":3600,"name":"x"}}'
    # A body cut off inside a secret's value still loses the value.
    assert journal_mod.redact_text('{"n":1,"client_secret":"abcdef', "application/json") == \
        f'{{"n":1,"client_secret":"{REDACTED}"'
    assert journal_mod.redact_text("password=hunter2&username=u", "application/x-www-form-urlencoded") == \
        f"password={REDACTED}&username=u"
    headers = journal_mod.redact_headers([(b"Authorization", b"Bearer t0k"), (b"Cookie", b"s=1"),
                                          (b"X-Blockkit-Access-Key", b"k"), (b"Accept", b"*/*"),
                                          (b"Location", b"http://127.0.0.1:9/cb?code=C0DE&state=s")])
    assert headers == [["authorization", REDACTED], ["cookie", REDACTED], ["x-blockkit-access-key", REDACTED],
                       ["accept", "*/*"], ["location", f"http://127.0.0.1:9/cb?code={REDACTED}&state=s"]]
    assert journal_mod.redact_path("/__emulator/downloads/GRANT123/model.safetensors") == \
        f"/__emulator/downloads/{REDACTED}/model.safetensors"
    # A JWT is redacted whatever its member is called (a bridge reply's {"token": {"raw": ...}}).
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyOjIifQ.c2lnbmF0dXJl"
    assert journal_mod.redact_text(f'{{"token":{{"raw":"{jwt}","expiresAt":"x"}}}}', "application/json") == \
        f'{{"token":{{"raw":"{REDACTED}","expiresAt":"x"}}}}'


def test_the_size_comes_from_the_option_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from blockkit.emulator.errors import EmulatorError

    monkeypatch.delenv(journal_mod.SIZE_VARIABLE, raising=False)
    assert journal_mod.journal_size(None) == 2000
    monkeypatch.setenv(journal_mod.SIZE_VARIABLE, "17")
    assert journal_mod.journal_size(None) == 17 and journal_mod.journal_size(0) == 0
    monkeypatch.setenv(journal_mod.SIZE_VARIABLE, "lots")
    with pytest.raises(EmulatorError, match="BLOCKKIT_EMULATOR_JOURNAL=lots: give a number of entries"):
        journal_mod.journal_size(None)


def test_the_middleware_keeps_requests_raw_and_formats_them_when_read() -> None:
    """The request path only keeps references; the entry's text is worked out on the first read, once,
    and the ring holds no connection (send/receive) once the answer is sent."""
    import asyncio

    from blockkit.emulator.http.journal import JournalMiddleware

    big = b"x" * (journal_mod.BODY_LIMIT + 10)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        journal_mod.note_reason(f"refused {scope['method']} with {len(message.get('body', b''))} bytes")
        await send({"type": "http.response.start", "status": 403, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.start", "status": 200, "headers": []})  # only the first counts
        await send({"type": "http.response.body", "body": big, "more_body": True})
        await send({"type": "http.response.body", "body": b"tail"})

    ring = Journal(10)
    middleware = JournalMiddleware(app, ring, "auth")
    sent: list[Any] = []

    async def one(method: str, body: bytes) -> None:
        async def receive() -> Any:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: Any) -> None:
            sent.append(message)

        scope = {"type": "http", "method": method, "path": "/__emulator/downloads/GRANT/f.bin",
                 "query_string": b"client_id=c-9&code=SECRET", "headers": [(b"authorization", b"Bearer T0K")]}
        await middleware(scope, receive, send)

    from async_run import run  # type: ignore[import-not-found]

    run(one("POST", b"client_secret=S3CRET&x=1"))
    run(one("GET", b"ignored"))
    assert len(sent) == 8  # the answer passed unchanged
    import gc

    stored = list(ring._ring)
    # Kept packed: atoms only (no connection, nothing formatted), which the collector stops following.
    assert [type(e) for e in stored] == [tuple, tuple]
    assert stored[0][5] == "/__emulator/downloads/GRANT/f.bin" and stored[0][6] == b"client_id=c-9&code=SECRET"
    gc.collect()
    gc.collect()  # a tuple is let go once the tuples in it are (one pass may meet it before them)
    assert not any(gc.is_tracked(e) for e in stored), [[(type(x), x) for x in e if gc.is_tracked(x)] for e in stored]
    posted, got = ring.entries(bodies=True)
    assert posted["status"] == 403 and posted["origin"] == "auth" and posted["method"] == "POST"
    assert posted["path"] == f"/__emulator/downloads/{REDACTED}/f.bin"
    assert posted["query"] == f"client_id=c-9&code={REDACTED}" and posted["who"] == {"client": "c-9"}
    assert posted["reason"] == "refused POST with 24 bytes"
    assert posted["request"] == {"headers": [["authorization", REDACTED]],
                                 "body": f"client_secret={REDACTED}&x=1"}
    assert posted["response"]["body"] == "x" * journal_mod.BODY_LIMIT + f"... ({len(big) + 4} bytes in all)"
    assert got["request"]["body"] is None  # a GET's body is not kept (HTTP gives it no meaning)
    assert ring.entries(bodies=True) == [posted, got]  # the same text on every read


def test_outside_a_request_the_notes_do_nothing() -> None:
    journal_mod.note_reason("nobody hears this")
    journal_mod.note_who(user=1)
    holder, token = journal_mod.begin()
    try:
        journal_mod.note_reason("first")
        journal_mod.note_reason("second")
        journal_mod.note_who(user=5, client="c")
    finally:
        journal_mod.end(token)
    assert (holder.reason, holder.who) == ("first", {"user": 5, "client": "c"})


# --- refusals and their reasons: OAuth ---------------------------------------------------------------

def test_redirect_uri_mismatch_names_the_registered_uris(oauth: OAuthEnv) -> None:
    client = oauth.client(redirect_uris=[REDIRECT, "http://127.0.0.1:9/second"])
    browser = oauth.signed_in(oauth.user()["username"])
    since = mark(oauth.base_url)
    sent = "http://127.0.0.1:9/elsewhere"
    answer = browser.get(oauth.auth_url + AUTHORIZE, params=oauth.authorize_params(client, redirect_uri=sent))
    assert answer.status_code == 400
    assert answer.json() == {"error": "invalid_request",
                             "error_description": "redirect_uri does not match any registered URI"}
    entry = only(entries_since(oauth.base_url, since), AUTHORIZE)
    assert entry["status"] == 400 and entry["origin"] == "auth"
    assert entry["reason"] == (f"redirect_uri '{sent}' does not match any redirect URI registered for client"
                               f" '{client.client_id}': '{REDIRECT}' and 'http://127.0.0.1:9/second'")
    assert entry["who"]["client"] == client.client_id and entry["who"]["user"] == oauth.user()["id"]


def test_pkce_mismatch_and_the_token_redirect_uri(oauth: OAuthEnv) -> None:
    client = oauth.client(confidential=False)
    user = oauth.user()["username"]
    code, _verifier = oauth.code_for(client, user)
    since = mark(oauth.base_url)
    answer = oauth.exchange(client, code, pkce()[0])
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"
    entry = only(entries_since(oauth.base_url, since), "/api/auth/oauth/token")
    assert entry["reason"] == ("PKCE: the code_verifier does not hash (S256) to the code_challenge sent to"
                               " /authorize; send the verifier the challenge was made from")
    assert entry["who"]["client"] == client.client_id

    code, verifier = oauth.code_for(client, user, state="st-2")
    since = mark(oauth.base_url)
    answer = oauth.exchange(client, code, verifier, redirect_uri="http://127.0.0.1:9/callback2")
    assert answer.status_code >= 400
    entry = only(entries_since(oauth.base_url, since), "/api/auth/oauth/token")
    assert entry["reason"] == ("redirect_uri 'http://127.0.0.1:9/callback2' is not the one the code was issued"
                               f" for ('{REDIRECT}')")


def test_an_expired_code_says_when_it_expired(oauth: OAuthEnv) -> None:
    from blockkit.emulator.store import oauth as oauth_store

    client = oauth.client()
    code, verifier = oauth.code_for(client, oauth.user()["username"])
    with oauth.emu.store.read() as db:
        expires_at = oauth_store.find_code(db, code).expires_at
    oauth.advance(601)
    since = mark(oauth.base_url)
    answer = oauth.exchange(client, code, verifier)
    assert answer.status_code == 400
    assert answer.json()["error_description"] == "Invalid grant: authorization code has expired"
    entry = only(entries_since(oauth.base_url, since), "/api/auth/oauth/token")
    said = re.fullmatch(f"the authorization code expired at {re.escape(expires_at)}; the emulator's clock reads"
                        r" (\S+)", entry["reason"])
    assert said is not None, entry["reason"]
    assert expires_at < said.group(1) <= oauth.emu.clock.iso()


def test_a_wrong_client_secret_and_the_missing_scope_of_userinfo(oauth: OAuthEnv) -> None:
    from blockkit.emulator.store import tokens

    client = oauth.client()
    since = mark(oauth.base_url)
    answer = oauth.token({"grant_type": "client_credentials", "client_id": client.client_id,
                          "client_secret": "not-the-secret"})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_client", answer.text
    entry = only(entries_since(oauth.base_url, since), "/api/auth/oauth/token")
    assert entry["reason"] == f"the client_secret sent is not the one registered for client '{client.client_id}'"
    assert "not-the-secret" not in json.dumps(read_journal(oauth.base_url, since=since, bodies=1))

    with oauth.emu.store.write() as db:
        raw = tokens.issue_access_token(db, user_id=oauth.user()["id"], scope=4 | 32, now=oauth.emu.clock.now())
    since = mark(oauth.base_url)
    answer = oauth.userinfo(raw)
    assert answer.status_code == 403 and answer.json()["error"] == "insufficient_scope"
    entry = only(entries_since(oauth.base_url, since), "/api/auth/oauth/userinfo")
    assert entry["reason"] == ("userinfo needs the UserRead scope (1); the access token holds scope 36"
                               " (ModelsRead and MediaRead)")
    assert entry["who"]["user"] == oauth.user()["id"]


def test_the_rate_limit_names_its_window_and_count(oauth: OAuthEnv) -> None:
    client = oauth.client()
    since = mark(oauth.base_url)
    answers = [oauth.http.post(oauth.auth_url + REVOKE, data={"token": "nothing", **client.creds()})
               for _ in range(21)]
    assert [a.status_code for a in answers[:20]] == [200] * 20 and answers[20].status_code == 429
    assert answers[20].json()["error_description"] == "Too many revocation requests: at most 20 a minute. Try again later."
    refused = [e for e in entries_since(oauth.base_url, since, status="429") if e["path"] == REVOKE]
    assert len(refused) == 1
    left = answers[20].headers["retry-after"]
    assert refused[0]["reason"] == ("the revoke rate limit allows 20 requests per address in a 60 s window; this"
                                    f" was request 21 from address 127.0.0.1 in the current window, which ends"
                                    f" in {left} s")


def test_tokens_and_secrets_never_reach_the_journal(oauth: OAuthEnv) -> None:
    client = oauth.client(owner=oauth.user()["username"])
    since = mark(oauth.base_url)
    code, verifier = oauth.code_for(client, oauth.user()["username"], scope="1")
    exchanged = oauth.exchange(client, code, verifier)
    assert exchanged.status_code == 200, exchanged.text
    granted = exchanged.json()
    refreshed = oauth.refresh(client, granted["refresh_token"]).json()
    assert httpx.get(oauth.base_url + "/api/v1/me", headers={"Authorization": f"Bearer {refreshed['access_token']}"},
                     timeout=30).status_code == 200
    assert httpx.get(oauth.base_url + "/api/v1/models", params={"token": refreshed["access_token"], "limit": 1},
                     timeout=30).status_code == 200
    browser = oauth.signed_in(oauth.user()["username"])
    session = next(iter(browser.cookies.values()))
    text = json.dumps(read_journal(oauth.base_url, since=since, bodies=1, limit=2000))
    secrets = {"code": code, "code_verifier": verifier, "client_secret": client.client_secret,
               "access_token": granted["access_token"],
               "refresh_token": granted["refresh_token"], "new access_token": refreshed["access_token"],
               "new refresh_token": refreshed["refresh_token"], "session cookie": session}
    for name, value in secrets.items():
        assert value and value not in text, name
    assert REDACTED in text
    # The journal still shows the exchange happened, and for whom.
    entries = entries_since(oauth.base_url, since)
    assert any(e["path"] == "/api/v1/me" and e["who"].get("user") == oauth.user()["id"] for e in entries)


# --- refusals and their reasons: blocks and Buzz ------------------------------------------------------

def test_a_block_scope_missing_names_the_scopes_the_token_holds(live_emulator: Any) -> None:
    from blockkit.emulator.services import blocktokens, consent
    from blockkit.emulator.state import EmulatorState
    from blockkit.emulator.seed import landmarks

    emu = live_emulator
    user = landmarks(emu.store)["member"]["id"]
    blocktokens.register_block_instance(emu.store, emu.clock.iso(), instance_id="inst-journal", block_id="blk",
                                        app_id="app1", scopes=["apps:storage:read"])
    consent.grant_declared(emu.store, emu.clock, user, "inst-journal")
    state = EmulatorState(emu.store, emu.clock, emu.options, emu.urls)
    minted = blocktokens.mint_block_token(state, instance_id="inst-journal", user_id=user)
    base = emu.urls.base_url
    since = mark(base)
    answer = httpx.post(base + "/api/v1/blocks/app-storage/set", json={"key": "k", "value": 1},
                        headers={"Authorization": f"Bearer {minted.token}"}, timeout=30)
    assert answer.status_code == 403 and answer.json() == {"error": "missing required scope: apps:storage:write"}
    entry = only(entries_since(base, since), "/api/v1/blocks/app-storage/set")
    assert entry["reason"] == "this route needs the block scope apps:storage:write; the block token holds apps:storage:read"
    assert entry["who"]["block"] == minted.claims["appBlockId"]
    assert minted.token not in json.dumps(read_journal(base, since=since, bodies=1))


def test_buzz_short_names_the_pools_beside_the_price(live_emulator: Any) -> None:
    from blockkit.emulator.seed import landmarks
    from blockkit.emulator.services import buzz
    from blockkit.emulator.services.orchestration.funds import create_api_key

    emu = live_emulator
    user = landmarks(emu.store)["free_user"]
    key = create_api_key(emu.store, emu.clock, user["username"])["api_key"]
    with emu.store.write() as db:
        buzz.open_accounts(db, user["id"], emu.clock.iso())
        db.execute("UPDATE buzz_accounts SET balance = 0 WHERE user_id = ?", (user["id"],))
        db.execute("UPDATE buzz_accounts SET balance = 5 WHERE user_id = ? AND pool = 'yellow'", (user["id"],))
        db.execute("UPDATE buzz_accounts SET balance = 1 WHERE user_id = ? AND pool = 'green'", (user["id"],))
    since = mark(emu.urls.base_url)
    workflow = {"steps": [{"$type": "textToImage", "name": "gen", "input": {"prompt": "a red fox", "seed": 7,
                                                                            "width": 512, "height": 512}}]}
    answer = httpx.post(emu.urls.orchestration_url + "/v2/consumer/workflows", json=workflow,
                        headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert answer.status_code == 403
    assert answer.json() == "this costs 2 Buzz and the viewer holds 1 in the pools it may use (green, blue)"
    entry = only(entries_since(emu.urls.base_url, since, origin="orchestration"), "/v2/consumer/workflows")
    assert entry["origin"] == "orchestration" and entry["who"]["user"] == user["id"]
    assert entry["reason"] == (f"the price is 2 Buzz and user {user['id']}'s pools it may use hold 1 (green 1,"
                               " blue 0); short by 1 (not usable here: yellow 5)")


def _block_token(emu: Any, instance: str, scopes: list[str], user: int, *, declared: list[str] | None = None,
                 consent_to: list[str] | None = None) -> Any:
    """A block token as a host mints it: ``declared`` scopes on the install, ``consent_to`` of them granted."""
    from blockkit.emulator.services import blocktokens, consent
    from blockkit.emulator.state import EmulatorState

    blocktokens.register_block_instance(emu.store, emu.clock.iso(), instance_id=instance, block_id="blk",
                                        app_id="app1", scopes=declared or scopes)
    if consent_to is None:
        consent.grant_declared(emu.store, emu.clock, user, instance)
    elif consent_to:
        consent.grant(emu.store, emu.clock, user, blocktokens.app_block_id("app1", "blk"), consent_to,
                      ceiling=declared or scopes)
    state = EmulatorState(emu.store, emu.clock, emu.options, emu.urls)
    return blocktokens.mint_block_token(state, instance_id=instance, user_id=user)


def test_consent_missing_names_the_scope_the_viewer_has_not_granted(live_emulator: Any) -> None:
    from blockkit.emulator.seed import landmarks

    emu = live_emulator
    user = landmarks(emu.store)["member"]["id"]
    minted = _block_token(emu, "inst-consent", [], user, declared=["user:read:self", "goods:read:self"],
                          consent_to=["goods:read:self"])
    assert minted.missing_scopes == ("user:read:self",)
    base = emu.urls.base_url
    since = mark(base)
    answer = httpx.get(base + "/api/v1/blocks/me", headers={"Authorization": f"Bearer {minted.token}"}, timeout=30)
    assert answer.status_code == 403 and answer.json() == {"error": "missing required scope: user:read:self"}
    entry = only(entries_since(base, since), "/api/v1/blocks/me")
    assert entry["reason"] == ("consent missing: this route needs the block scope user:read:self, which block"
                               f" app1/blk declares but user {user} has not consented to (user {user} granted"
                               " goods:read:self); the block token holds goods:read:self")


def test_an_idempotency_key_reused_for_another_purchase_names_both(live_emulator: Any) -> None:
    from blockkit.emulator.seed import landmarks
    from blockkit.emulator.services import goods

    emu = live_emulator
    user = landmarks(emu.store)["member"]["id"]
    goods.register_catalogue(emu.store, emu.clock, "app1", "blk",
                             [{"id": "gem-pack", "title": "Gems", "priceBuzz": 100},
                              {"id": "unlock", "title": "Unlock", "priceBuzz": 20, "kind": "app_unlock"}])
    minted = _block_token(emu, "inst-goods", ["goods:purchase:self"], user)
    auth = {"Authorization": f"Bearer {minted.token}"}
    base = emu.urls.base_url
    first = httpx.post(base + "/api/v1/blocks/goods/purchase", headers=auth, timeout=30,
                       json={"goodId": "gem-pack", "idempotencyKey": "k-1"})
    assert first.status_code == 200, first.text
    since = mark(base)
    other = httpx.post(base + "/api/v1/blocks/goods/purchase", headers=auth, timeout=30,
                       json={"goodId": "unlock", "expectedPriceBuzz": 20, "idempotencyKey": "k-1"})
    assert other.status_code == 422
    assert other.json() == {"error": "This idempotency key was already used for a different purchase"}
    with emu.store.read() as db:
        created, expires = db.execute("SELECT created_at, expires_at FROM idempotency_keys WHERE key = 'k-1'"
                                      ).fetchone()
    entry = only(entries_since(base, since), "/api/v1/blocks/goods/purchase")
    assert entry["reason"] == (f"idempotency key 'k-1' was first used at {created} for good \"gem-pack\" at 100 Buzz"
                               " (no expectedPriceBuzz); this request is for good \"unlock\" at 20 Buzz"
                               f" (expectedPriceBuzz 20). A key names one purchase until it expires at {expires}:"
                               " send a new key for a different purchase")


def test_the_storage_quota_names_what_the_block_holds(live_emulator: Any) -> None:
    from blockkit.emulator.seed import landmarks
    from blockkit.emulator.services import appstorage

    emu = live_emulator
    user = landmarks(emu.store)["member"]["id"]
    minted = _block_token(emu, "inst-quota", ["apps:storage:write"], user)
    used = appstorage.QUOTA_BYTES - 10
    with emu.store.write() as db:  # another viewer's values fill the block's quota but for 10 bytes
        db.execute("INSERT INTO app_storage (block_id, user_id, key, value, size, updated_at) VALUES"
                   " ('blk', ?, 'big', '1', ?, ?)", (landmarks(emu.store)["free_user"]["id"], used, emu.clock.iso()))
    base = emu.urls.base_url
    since = mark(base)
    answer = httpx.post(base + "/api/v1/blocks/app-storage/set", json={"key": "k", "value": "x" * 20},
                        headers={"Authorization": f"Bearer {minted.token}"}, timeout=30)
    assert answer.status_code == 413 and answer.json() == {"message": "app quota exceeded"}
    entry = only(entries_since(base, since), "/api/v1/blocks/app-storage/set")
    assert entry["reason"] == (f"app storage quota: block blk's storage holds {used} of its {appstorage.QUOTA_BYTES}"
                               f" bytes across its viewers; this value is 22 bytes, which would make {used + 22}")


DEVICE = "/api/auth/oauth/device"
DEVICE_TOKEN = "/api/auth/oauth/device-token"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def test_the_device_grant_s_refusals_say_why(oauth: OAuthEnv) -> None:
    from blockkit.emulator.services.oauth.device_grant import _when

    client = oauth.client(confidential=False)
    started = oauth.http.post(oauth.auth_url + DEVICE, data={"client_id": client.client_id, "scope": "1"})
    assert started.status_code == 200, started.text
    device = started.json()

    def poll(code: str = device["device_code"]) -> tuple[httpx.Response, dict[str, Any]]:
        since = mark(oauth.base_url)
        answer = oauth.http.post(oauth.auth_url + DEVICE_TOKEN, data={"grant_type": DEVICE_GRANT,
                                                                      "device_code": code,
                                                                      "client_id": client.client_id})
        return answer, only(entries_since(oauth.base_url, since), DEVICE_TOKEN)

    clock = oauth.emu.clock
    answer, entry = poll()
    assert answer.status_code == 400 and answer.json()["error"] == "authorization_pending"
    # The emulator's clock runs with real time: the seconds and instants are read back and bounded.
    said = re.fullmatch(r"authorization_pending: no user has approved or denied the device yet; the code expires in"
                        r" (\d+(?:\.\d)?) s \(at (\S+)\); poll again every 5 s", entry["reason"])
    assert said is not None, entry["reason"]
    assert 895 <= float(said.group(1)) <= 900
    expires_at = said.group(2)
    assert clock.iso() < expires_at <= _when(clock.timestamp() + 900)
    oauth.advance(2)
    answer, entry = poll()
    assert answer.json()["error"] == "slow_down"
    said = re.fullmatch(r"slow_down: this poll came (\d+(?:\.\d)?) s after the previous one and the interval is 5 s;"
                        r" the interval is now 10 s", entry["reason"])
    assert said is not None and 2 <= float(said.group(1)) < 5, entry["reason"]
    answer, entry = poll("0" * 64)
    assert answer.json()["error"] == "expired_token"
    assert entry["reason"] == ("expired_token: the device code is not one the emulator holds: it was never issued"
                               " by this run, was already exchanged for a token, or expired and was dropped")
    oauth.advance(900)
    answer, entry = poll()
    assert answer.json() == {"error": "expired_token", "error_description": "Device code expired (15 minutes); start again"}
    said = re.fullmatch(f"expired_token: the device code expired at {re.escape(expires_at)} \\(15 minutes after it"
                        r" was issued\); the emulator's clock reads (\S+)", entry["reason"])
    assert said is not None, entry["reason"]
    assert expires_at < said.group(1) <= clock.iso()

    denied = oauth.http.post(oauth.auth_url + DEVICE, data={"client_id": client.client_id, "scope": "1"}).json()
    member = oauth.user()
    browser = oauth.signed_in(member["username"])
    page = browser.get(denied["verification_uri_complete"], headers=HTML)
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    browser.post(oauth.auth_url + "/login/oauth/device",
                 data={"user_code": denied["user_code"], "csrf_token": csrf, "decision": "deny"})
    answer, entry = poll(denied["device_code"])
    assert answer.json()["error"] == "access_denied"
    assert entry["reason"] == (f"access_denied: user {member['id']} denied the device on the device page"
                               f" (client '{client.client_id}', scope 1); start again")
    assert denied["device_code"] not in json.dumps(read_journal(oauth.base_url, bodies=1, limit=50))


def test_the_catalogue_s_own_scope_check_names_the_token_s_scope(live_emulator: Any) -> None:
    from blockkit.emulator.seed import landmarks
    from blockkit.emulator.store import tokens

    emu = live_emulator
    user = landmarks(emu.store)["member"]["id"]
    with emu.store.write() as db:
        raw = tokens.issue_access_token(db, user_id=user, scope=1 | 2, now=emu.clock.now())
    base = emu.urls.base_url
    since = mark(base)
    answer = httpx.post(base + "/api/v1/blocks/submit-version", json={"bundleBase64": ""},
                        headers={"Authorization": f"Bearer {raw}"}, timeout=30)
    assert answer.status_code == 403
    assert answer.json() == {"message": "Submitting an App requires a personal API key or an OAuth token with the"
                                        " Apps submit scope"}
    entry = only(entries_since(base, since), "/api/v1/blocks/submit-version")
    assert entry["reason"] == ("Submitting an App needs the AppBlocksSubmit scope (33554432) on an OAuth token; the"
                               " access token holds scope 3 (UserRead and UserWrite). A personal API key needs no"
                               " scope")


def test_a_refusal_no_code_explained_carries_the_answer_s_own_words(live_emulator: Any) -> None:
    base = live_emulator.urls.base_url
    since = mark(base)
    assert httpx.get(base + "/api/v1/models/987654321", timeout=30).status_code == 404
    assert httpx.get(base + "/api/v1/me", headers={"Authorization": "Bearer not-a-token"}, timeout=30).status_code == 401
    entries = entries_since(base, since)
    assert only(entries, "/api/v1/models/987654321")["reason"] == \
        httpx.get(base + "/api/v1/models/987654321", timeout=30).json()["error"]
    assert only(entries, "/api/v1/me")["reason"] == "the bearer token was refused: no such access token"
    assert all(e["reason"] is None for e in entries if e["status"] < 300)


# --- the route: filters and the long poll ------------------------------------------------------------

def test_filters_limit_and_bad_parameters(live_emulator: Any) -> None:
    emu = live_emulator
    base = emu.urls.base_url
    since = mark(base)
    httpx.get(base + "/api/v1/models", params={"limit": 1}, timeout=30)
    httpx.get(base + "/api/v1/models/987654321", timeout=30)
    httpx.get(emu.urls.auth_url + "/api/auth/oauth/authorize", params={"client_id": "c-1"}, timeout=30)
    httpx.get(emu.urls.orchestration_url + "/v2/consumer/workflows/none", timeout=30)
    everything = entries_since(base, since)
    assert [e["origin"] for e in everything] == ["catalogue", "catalogue", "auth", "orchestration"]
    assert [e["id"] for e in everything] == sorted(e["id"] for e in everything)
    assert [e["path"] for e in entries_since(base, since, status="404")] == ["/api/v1/models/987654321",
                                                                              *[e["path"] for e in everything[3:]
                                                                                if e["status"] == 404]]
    assert all(e["status"] // 100 == 4 for e in entries_since(base, since, status="4xx"))
    assert [e["origin"] for e in entries_since(base, since, origin="auth")] == ["auth"]
    assert [e["who"] for e in entries_since(base, since, client="c-1")] == [{"client": "c-1"}]
    assert len(read_journal(base, since=since, limit=2)["entries"]) == 2
    plain = entries_since(base, since)[0]
    assert "request" not in plain and "response" not in plain
    full = read_journal(base, since=since, bodies=1)["entries"][0]
    assert full["response"]["body"].startswith('{"items":') and full["query"] == "limit=1"
    for bad in ({"status": "four"}, {"origin": "moon"}, {"wait": "31"}, {"limit": "0"}, {"since": "x"},
                {"bodies": "yes"}):
        answer = httpx.get(base + "/__emulator/journal", params=bad, timeout=30)
        assert answer.status_code == 400 and "must" in answer.json()["error"], bad
    # The journal's own reads are not journalled.
    assert all(e["path"] != "/__emulator/journal" for e in entries_since(base, since))


def test_wait_answers_as_soon_as_a_new_entry_comes(live_emulator: Any) -> None:
    base = live_emulator.urls.base_url
    since = mark(base)
    later = threading.Timer(0.5, lambda: httpx.get(base + "/api/v1/tags", params={"limit": 1}, timeout=30))
    later.start()
    try:
        entries = read_journal(base, since=since, wait=20)["entries"]
    finally:
        later.join()
    assert [e["path"] for e in entries] == ["/api/v1/tags"]


def test_the_ring_bound_and_off_in_a_server(tmp_path: Path) -> None:
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    with Emulator(EmulatorOptions(data=tmp_path / "small", journal_size=5)) as emu:
        for n in range(12):
            httpx.get(emu.urls.base_url + f"/api/v1/models/{900000 + n}", timeout=30)
        answer = read_journal(emu.urls.base_url, limit=2000)
        assert answer["size"] == 5 and answer["last_id"] == 12 and len(emu.journal) == 5
        assert [e["path"] for e in answer["entries"]] == [f"/api/v1/models/{900000 + n}" for n in range(7, 12)]
    with Emulator(EmulatorOptions(data=tmp_path / "off", journal_size=0)) as emu:
        httpx.get(emu.urls.base_url + "/api/v1/models/1", timeout=30)
        assert read_journal(emu.urls.base_url) == {"entries": [], "last_id": 0, "size": 0, "enabled": False,
                                                   "recording": False}
        resume = httpx.post(emu.urls.base_url + "/__emulator/journal", json={"recording": True}, timeout=30)
        assert resume.status_code == 409 and "--journal-size 0" in resume.json()["error"]


def test_a_paused_journal_answers_but_does_not_record(tmp_path: Path) -> None:
    from blockkit.emulator.options import EmulatorOptions
    from blockkit.emulator.runtime import Emulator

    with Emulator(EmulatorOptions(data=tmp_path / "d", journal_size=50)) as emu:
        base = emu.urls.base_url
        httpx.get(base + "/api/v1/models/900001", timeout=30)
        paused = httpx.post(base + "/__emulator/journal", json={"recording": False}, timeout=30)
        assert paused.status_code == 200, paused.text
        assert paused.json() == {"last_id": 1, "size": 50, "enabled": True, "recording": False}
        assert httpx.get(base + "/api/v1/models/900002", timeout=30).status_code == 404  # answered as ever
        httpx.get(emu.urls.auth_url + "/.well-known/openid-configuration", timeout=30)
        held = read_journal(base, limit=2000)
        assert held["recording"] is False and [e["path"] for e in held["entries"]] == ["/api/v1/models/900001"]
        resumed = httpx.post(base + "/__emulator/journal", json={"recording": True}, timeout=30)
        assert resumed.json()["recording"] is True
        httpx.get(base + "/api/v1/models/900003", timeout=30)
        assert [e["path"] for e in read_journal(base, limit=2000)["entries"]] == [
            "/api/v1/models/900001", "/api/v1/models/900003"]
        for bad in ({}, {"recording": "no"}, {"recording": 0}, {"recording": False, "more": 1}, []):
            answer = httpx.post(base + "/__emulator/journal", json=bad, timeout=30)
            assert answer.status_code == 400 and answer.json()["error"] == (
                'send a JSON object: {"recording": true} or {"recording": false}'), bad
        assert httpx.post(base + "/__emulator/journal", content=b"{", headers={"Content-Type": "application/json"},
                          timeout=30).status_code == 400
        assert read_journal(base)["recording"] is True


# --- the guard, and the command -------------------------------------------------------------------------

@pytest.fixture
def keyed(start_emulator: Any, tmp_path: Path) -> Any:
    return start_emulator("--access-key", KEY, "--data", str(tmp_path / "data"))


def test_the_route_asks_for_the_key_and_refuses_other_origins(keyed: Any) -> None:
    base = keyed.info["base_url"]
    httpx.get(base + "/api/v1/models/987654321", timeout=30)
    assert httpx.get(base + "/__emulator/journal", timeout=30).status_code == 401
    assert httpx.get(base + "/__emulator/journal", headers={"X-Blockkit-Access-Key": "x" * 26},
                     timeout=30).status_code == 401
    for refusal in ({"Origin": "http://evil.example"}, {"Origin": "http://127.0.0.1:1"},
                    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
        answer = httpx.get(base + "/__emulator/journal", headers={"X-Blockkit-Access-Key": KEY, **refusal},
                           timeout=30)
        assert answer.status_code == 403 and "own pages only" in answer.json()["error"], refusal
    own = httpx.get(base + "/__emulator/journal", headers={"X-Blockkit-Access-Key": KEY, "Origin": base,
                                                           "Sec-Fetch-Site": "same-origin"}, timeout=30)
    assert own.status_code == 200 and own.json()["entries"][-1]["path"] == "/api/v1/models/987654321"
    # The route is the catalogue's alone.
    assert httpx.get(keyed.info["auth_url"] + "/__emulator/journal", headers={"X-Blockkit-Access-Key": KEY},
                     timeout=30).status_code == 404


def test_log_command_reads_by_ready_file_and_data_dir(keyed: Any, tmp_path: Path) -> None:
    base = keyed.info["base_url"]
    httpx.get(base + "/api/v1/models", params={"limit": 1}, timeout=30)
    httpx.get(base + "/api/v1/me", headers={"Authorization": "Bearer not-a-token"}, timeout=30)
    by_file = blockkit("emulator", "log", "--ready-file", str(keyed.ready_file))
    assert by_file.returncode == 0, by_file.stderr
    lines = by_file.stdout.splitlines()
    assert any(" 200 " in line and "/api/v1/models?limit=1" in line for line in lines)
    assert "        reason: the bearer token was refused: no such access token" in lines
    by_data = blockkit("emulator", "log", "--data", str(tmp_path / "data"), "--status", "4xx", "--format", "json")
    assert by_data.returncode == 0, by_data.stderr
    rows = [json.loads(line) for line in by_data.stdout.splitlines()]
    assert [(r["path"], r["status"]) for r in rows] == [("/api/v1/me", 401)]
    assert "not-a-token" not in by_data.stdout


def test_the_pause_is_a_guarded_control_write_and_a_command(keyed: Any) -> None:
    base = keyed.info["base_url"]
    url = base + "/__emulator/journal"
    assert httpx.post(url, json={"recording": False}, timeout=30).status_code == 401
    for refusal in ({"Origin": "http://evil.example"}, {"Origin": "http://127.0.0.1:1"}):
        answer = httpx.post(url, json={"recording": False}, headers={"X-Blockkit-Access-Key": KEY, **refusal},
                            timeout=30)
        assert answer.status_code == 403, refusal
    simple = httpx.post(url, content=b'{"recording": false}', timeout=30,
                        headers={"X-Blockkit-Access-Key": KEY, "Content-Type": "text/plain"})
    assert simple.status_code == 415
    assert read_journal(base, KEY)["recording"] is True
    paused = blockkit("emulator", "log", "--ready-file", str(keyed.ready_file), "--pause")
    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.startswith("the request journal is paused")
    assert read_journal(base, KEY)["recording"] is False
    shown = blockkit("emulator", "log", "--ready-file", str(keyed.ready_file))
    assert shown.returncode == 0 and "the request journal is paused" in shown.stderr
    both = blockkit("emulator", "log", "--ready-file", str(keyed.ready_file), "--resume", "--follow")
    assert both.returncode == 2 and "give one" in both.stderr
    resumed = blockkit("emulator", "log", "--ready-file", str(keyed.ready_file), "--resume")
    assert resumed.returncode == 0 and resumed.stdout.startswith("the request journal records again")
    assert read_journal(base, KEY)["recording"] is True


def test_log_command_bad_use_is_one_line(tmp_path: Path) -> None:
    neither = blockkit("emulator", "log")
    assert neither.returncode == 2 and neither.stderr.strip() == (
        "blockkit emulator: log needs --data DIR or --ready-file PATH (one of them): the running emulator's")
    idle = blockkit("emulator", "log", "--data", str(tmp_path))
    assert idle.returncode == 2 and idle.stderr.count("\n") == 1 and "no emulator is running on it" in idle.stderr


def test_log_follow_prints_new_requests_as_they_come(keyed: Any) -> None:
    base = keyed.info["base_url"]
    follower = subprocess.Popen([sys.executable, "-m", "blockkit", "emulator", "log", "--ready-file",
                                 str(keyed.ready_file), "--follow", "--format", "json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        got: list[dict[str, Any]] = []

        def read() -> None:
            assert follower.stdout is not None
            for line in follower.stdout:
                got.append(json.loads(line))
                if any(e["path"] == "/api/v1/models/424242" for e in got):
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        # Requests until the follower has shown one made after it started (it may start after the first).
        deadline = time.monotonic() + 60
        while reader.is_alive() and time.monotonic() < deadline:
            httpx.get(base + "/api/v1/models/424242", timeout=30)
            reader.join(0.5)
        assert not reader.is_alive(), follower.stderr.read() if follower.poll() is not None else "no line"
        shown = [e for e in got if e["path"] == "/api/v1/models/424242"]
        assert shown[0]["status"] == 404 and shown[0]["reason"]
    finally:
        follower.terminate()
        follower.wait(10)
