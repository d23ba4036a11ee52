"""Consent (services/consent.py, store/consent.py, migration 0010): a signed-in viewer's first token holds
only the consent-exempt scopes; a grant (additive, bounded to what the block declares) is kept per viewer
and app block, so the HTTP mint sees it too; a reset forgets it. As civitai/civitai
scope-grant.service.ts:167-211 and block-tokens/index.ts:1011-1051, 1181-1192."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from oauth_env import OAuthEnv

from blockkit.emulator.services import blocktokens, consent
from blockkit.emulator.services.errors import ServiceError
from blockkit.emulator.store import APPLICATION_ID, DB_FILENAME, Store, migrate
from blockkit.emulator.store import consent as consent_store

DECLARED = ["apps:storage:read", "apps:storage:write", "apps:storage:shared:read", "user:read:self",
            "buzz:read:self", "ai:write:budgeted", "collections:read:self", "collections:read:private",
            "models:read:self"]
EXEMPT_DECLARED = ["apps:storage:read", "apps:storage:write", "apps:storage:shared:read", "collections:read:self",
                   "models:read:self"]
GATED_DECLARED = ["user:read:self", "buzz:read:self", "ai:write:budgeted", "collections:read:private"]


def test_the_exempt_set_is_the_platforms() -> None:
    assert consent.CONSENT_EXEMPT_SCOPES == {
        "apps:storage:read", "apps:storage:write", "apps:storage:shared:read", "apps:storage:shared:write",
        "models:read:self", "collections:read:self", "collections:write:self"}
    # Everything else needs a grant, the settings scopes and the private collections read included.
    assert consent.gated(["block:settings:read", "collections:read:private", "apps:storage:read"]) == [
        "block:settings:read", "collections:read:private"]


def test_partition_keeps_the_order_and_withholds_what_is_not_granted() -> None:
    signable, missing = consent.partition(DECLARED, {"buzz:read:self"})
    assert signable == ["apps:storage:read", "apps:storage:write", "apps:storage:shared:read", "buzz:read:self",
                        "collections:read:self", "models:read:self"]
    assert missing == ["user:read:self", "ai:write:budgeted", "collections:read:private"]


def test_a_grant_is_additive_bounded_by_the_ceiling_and_reset_forgets_it(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        from blockkit.emulator.store.clock import Clock

        clock = Clock(store)
        assert consent.granted(store, 7, "app/blk") == set()
        assert consent.grant(store, clock, 7, "app/blk", ["user:read:self", "posts:write:self"],
                             ceiling=DECLARED) == ["user:read:self"]
        assert consent.grant(store, clock, 7, "app/blk", ["buzz:read:self"], ceiling=DECLARED) == ["buzz:read:self"]
        assert consent.granted(store, 7, "app/blk") == {"user:read:self", "buzz:read:self"}
        # Per viewer and app block.
        assert consent.granted(store, 8, "app/blk") == set() and consent.granted(store, 7, "app/other") == set()
        with pytest.raises(ServiceError) as refused:
            consent.grant(store, clock, 7, "app/blk", ["posts:write:self"], ceiling=DECLARED)
        assert refused.value.status == 400 and "approved manifest" in refused.value.detail
        assert consent.reset(store, 7, "app/blk") is True
        assert consent.granted(store, 7, "app/blk") == set()
        assert consent.reset(store, 7, "app/blk") is False


def test_a_revoked_grant_reads_as_none_and_a_new_grant_restores_the_row(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        with store.write() as db:
            consent_store.add_grant(db, 1, "a/b", ["user:read:self"], version="1.0.0", now="2026-01-01T00:00:00.000Z")
            db.execute("UPDATE app_user_scope_grants SET revoked_at = '2026-01-02T00:00:00.000Z'")
        assert consent.granted(store, 1, "a/b") == set()
        with store.write() as db:
            # As recordScopeGrant: the union is with the stored scopes, and the revocation is cleared.
            merged = consent_store.add_grant(db, 1, "a/b", ["buzz:read:self"], version="1.0.1",
                                             now="2026-01-03T00:00:00.000Z")
        assert merged == ["buzz:read:self", "user:read:self"]
        assert consent.granted(store, 1, "a/b") == {"buzz:read:self", "user:read:self"}


def test_migration_0010_adds_the_ledger_to_a_store_of_version_9(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    conn = sqlite3.connect(path)
    for migration in migrate.migrations():
        if migration.version <= 9:
            for statement in migrate.statements(migration.sql):
                conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 9")
    conn.commit()
    assert "app_user_scope_grants" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert migrate.migrations()[9].name == "scope_grants"
    with Store.open(tmp_path) as store:
        assert store.path == path and store.schema_version == migrate.latest_version() >= 10
        columns = [r[1] for r in store.connection().execute("PRAGMA table_info(app_user_scope_grants)")]
        assert columns == ["user_id", "app_block_id", "version", "granted_scopes", "created_at", "updated_at",
                           "revoked_at"]
        with store.write() as db:
            consent_store.add_grant(db, 3, "x/y", ["user:read:self"], version="", now="2026-01-01T00:00:00.000Z")
            with pytest.raises(sqlite3.IntegrityError):  # one row per (viewer, app block)
                db.execute("INSERT INTO app_user_scope_grants (user_id, app_block_id, created_at, updated_at)"
                           " VALUES (3, 'x/y', '', '')")
    with Store.open(tmp_path) as store:  # kept across a reopen
        assert consent.granted(store, 3, "x/y") == {"user:read:self"}


# --- the mint, in process and over HTTP ----------------------------------------------------------

def _install(oauth: OAuthEnv, instance: str, scopes: list[str]) -> None:
    blocktokens.register_block_instance(oauth.emu.store, oauth.emu.clock.iso(), instance_id=instance,
                                        block_id=f"blk-{instance}", app_id="app_consent", scopes=scopes,
                                        slot_id="app.page", model_id=None, buzz_budget_per_gen=20)


def _mint_http(oauth: OAuthEnv, instance: str, browser: httpx.Client | None) -> dict[str, Any]:
    body = {"blockInstanceId": instance, "slotContext": {"entityType": "none", "slotId": "app.page"}}
    headers = {"Origin": oauth.base_url}
    if browser is None:
        with httpx.Client() as http:
            answer = http.post(oauth.base_url + "/api/v1/block-tokens", json=body, headers=headers)
    else:
        answer = browser.post(oauth.base_url + "/api/v1/block-tokens", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_a_first_visit_mints_the_exempt_scopes_and_says_what_is_missing(oauth: OAuthEnv) -> None:
    _install(oauth, "first", DECLARED)
    member = oauth.user("member")
    minted = blocktokens.mint_block_token(oauth.emu, instance_id="first", user_id=member["id"])  # type: ignore[arg-type]
    assert sorted(minted.claims["scopes"]) == sorted(EXEMPT_DECLARED)
    assert minted.as_dict()["needsConsent"] is True and sorted(minted.as_dict()["missingScopes"]) == sorted(GATED_DECLARED)
    assert "buzzBudget" not in minted.claims  # ai:write:budgeted is withheld, so is its budget

    http = _mint_http(oauth, "first", oauth.signed_in(member["username"]))
    assert http["needsConsent"] is True and sorted(http["missingScopes"]) == sorted(GATED_DECLARED)


def test_a_grant_reaches_the_http_mint_and_the_rest_twins(oauth: OAuthEnv) -> None:
    # (models:read:self binds a model id, which a page token has not: the emulator refuses every route then)
    _install(oauth, "granted", [s for s in DECLARED if s != "models:read:self"])
    member = oauth.user("member")
    app_block = blocktokens.app_block_id("app_consent", "blk-granted")
    consent.grant(oauth.emu.store, oauth.emu.clock, member["id"], app_block, ["buzz:read:self"], ceiling=DECLARED)
    browser = oauth.signed_in(member["username"])
    body = _mint_http(oauth, "granted", browser)
    assert sorted(body["missingScopes"]) == ["ai:write:budgeted", "collections:read:private", "user:read:self"]
    buzz = httpx.get(oauth.base_url + "/api/v1/blocks/buzz", headers={"Authorization": f"Bearer {body['token']}"})
    assert buzz.status_code == 200, buzz.text
    me = httpx.get(oauth.base_url + "/api/v1/blocks/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 403 and "user:read:self" in me.text  # withheld until granted

    consent.grant(oauth.emu.store, oauth.emu.clock, member["id"], app_block, GATED_DECLARED, ceiling=DECLARED)
    body = _mint_http(oauth, "granted", browser)
    assert body == {**body, "needsConsent": False, "missingScopes": []}
    me = httpx.get(oauth.base_url + "/api/v1/blocks/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 200 and me.json()["id"] == member["id"]

    consent.reset(oauth.emu.store, member["id"], app_block)
    assert sorted(_mint_http(oauth, "granted", browser)["missingScopes"]) == sorted(GATED_DECLARED)


def test_a_signed_out_viewer_has_no_consent_signal(oauth: OAuthEnv) -> None:
    _install(oauth, "anon", DECLARED)
    body = _mint_http(oauth, "anon", None)
    assert body["needsConsent"] is False and body["missingScopes"] == []
