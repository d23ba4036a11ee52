"""Consent, the token and sign-in as a block sees them, from inside the real cross-origin block frame
(headless Chromium): a signed-in viewer's first token holds only the consent-exempt scopes; REQUEST_CONSENT
opens the host's consent step once the block is ready; Allow grants (kept in the local platform's store, so
the next page load starts granted) and pushes TOKEN_REFRESH; "Not now" sends nothing; the viewer menu resets
a grant. REQUEST_TOKEN answers the held token, TOKEN_REFRESH comes 2 minutes before expiry, REQUEST_SIGN_IN
opens a sign-in step once ready. Rows 17, 20, 21, 26, 28, 44 and 59 of the 2026-12-02 fidelity review.

Each test names its own block (blockId), so a grant one test records is no other test's first visit.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blockkit.dev import trace
from blockkit.dev.timings import PLATFORM_TIMINGS

pytestmark = pytest.mark.browser

SCOPES = ["apps:storage:read", "user:read:self", "buzz:read:self"]
EXEMPT = ["apps:storage:read"]
GATED = ["user:read:self", "buzz:read:self"]


def _block(make_block: Any, name: str, *, behaviour: dict[str, Any] | None = None,
           scopes: list[str] = SCOPES) -> Path:
    return make_block(manifest={"blockId": name, "name": f"App {name}", "scopes": scopes}, behaviour=behaviour,
                      name=name)


def _received(run: Any, type_: str) -> list[dict[str, Any]]:
    return run.frame.evaluate(f"window.__received.filter(m => m && m.type === {type_!r})")  # type: ignore[no-any-return]


def _wait_received(run: Any, type_: str, count: int = 1, timeout: float = 10_000) -> list[dict[str, Any]]:
    run.frame.wait_for_function(f"() => (window.__received || []).filter(m => m && m.type === {type_!r}).length >= {count}",
                                timeout=timeout)
    return _received(run, type_)


def _post(run: Any, message: dict[str, Any]) -> None:
    run.frame.evaluate("m => window.parent.postMessage(m, '*')", message)


def _ask_viewer(run: Any, request_id: str) -> dict[str, Any]:
    _post(run, {"type": "GET_VIEWER", "payload": {"requestId": request_id}})
    run.frame.wait_for_function(
        f"() => (window.__received || []).some(m => m && m.payload && m.payload.requestId === {request_id!r})", timeout=10_000)
    return run.frame.evaluate(  # type: ignore[no-any-return]
        f"window.__received.find(m => m && m.payload && m.payload.requestId === {request_id!r}).payload")


def _first_token(run: Any) -> dict[str, Any]:
    return _wait_received(run, "BLOCK_INIT")[0]["payload"]["token"]  # type: ignore[no-any-return]


def test_a_first_visit_token_lacks_the_gated_scopes_and_allow_grants_them(host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "consent-allow"))
    run.wait_outcome("ready")
    token = _first_token(run)
    # The platform's page token: {raw, scopes, expiresAt}, and no consent-gated scope yet.
    assert set(token) == {"raw", "scopes", "expiresAt"} and token["scopes"] == EXEMPT
    assert _ask_viewer(run, "v1") == {"requestId": "v1", "error": "block lacks user:read:self scope"}

    _post(run, {"type": "REQUEST_CONSENT", "payload": {"scopes": ["user:read:self"]}})
    card = run.page.wait_for_selector(".dialog-card[data-type=REQUEST_CONSENT]")
    assert "App consent-allow needs permission" in card.text_content()
    assert run.page.eval_on_selector_all(".consent-scopes code", "cs => cs.map(c => c.textContent)") == GATED
    run.page.click(".consent-allow")
    [refresh] = _wait_received(run, "TOKEN_REFRESH")
    assert set(refresh["payload"]["token"]) == {"raw", "scopes", "expiresAt"}
    assert refresh["payload"]["token"]["scopes"] == SCOPES
    assert not run.page.is_visible("#host-dialog .dialog-card")
    viewer = _ask_viewer(run, "v2")["viewer"]
    assert viewer["id"] == run.session.platform.viewer_id
    # REQUEST_CONSENT is fire-and-forget: the block got no reply to it, only the push.
    assert not [m for m in run.frame.evaluate("window.__received") if m and str(m.get("type")).startswith("CONSENT")]

    # The grant is in the local platform's store: the next page load starts granted, and asks nothing.
    run.page.reload()
    run.wait_outcome("ready")
    assert _first_token(run)["scopes"] == SCOPES
    _post(run, {"type": "REQUEST_CONSENT"})
    run.page.wait_for_timeout(600)
    assert not run.page.is_visible("#host-dialog .dialog-card")
    events = run.events()
    assert [e["scopes"] for e in events if e.get("event") == "consent-granted"] == [GATED]


def test_not_now_sends_the_block_nothing_and_grants_nothing(host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "consent-deny"))
    run.wait_outcome("ready")
    before = run.frame.evaluate("window.__received.length")
    _post(run, {"type": "REQUEST_CONSENT"})
    run.page.wait_for_selector(".dialog-card[data-type=REQUEST_CONSENT]")
    run.page.click(".consent-deny")
    run.page.wait_for_timeout(800)
    assert run.frame.evaluate("window.__received.length") == before  # as on the platform: no reply, no push
    assert _ask_viewer(run, "v")["error"] == "block lacks user:read:self scope"
    assert run.session.platform.granted_scopes() == []
    assert [e for e in run.events() if e.get("event") == "consent-denied"]
    # Asking again opens the step again.
    _post(run, {"type": "REQUEST_CONSENT"})
    run.page.wait_for_selector(".dialog-card[data-type=REQUEST_CONSENT]")


def test_the_viewer_menu_resets_a_grant_for_a_first_visit_again(host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "consent-reset"))
    run.wait_outcome("ready")
    _post(run, {"type": "REQUEST_CONSENT"})
    run.page.wait_for_selector(".dialog-card[data-type=REQUEST_CONSENT]")
    run.page.click(".consent-allow")
    _wait_received(run, "TOKEN_REFRESH")
    assert run.session.platform.granted_scopes() == sorted(GATED)
    with run.page.expect_navigation():
        run.page.click("#consent-reset")
    run.wait_outcome("ready")
    assert _first_token(run)["scopes"] == EXEMPT
    assert run.session.platform.granted_scopes() == []
    _post(run, {"type": "REQUEST_CONSENT"})
    run.page.wait_for_selector(".dialog-card[data-type=REQUEST_CONSENT]")


def test_before_block_ready_consent_and_sign_in_open_nothing(host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "consent-early", behaviour={"ready": False}))
    run.frame.wait_for_function("() => (window.__received || []).some(m => m && m.type === 'BLOCK_INIT')", timeout=10_000)
    _post(run, {"type": "REQUEST_CONSENT"})
    _post(run, {"type": "REQUEST_SIGN_IN"})
    run.page.wait_for_timeout(800)
    assert not run.page.is_visible("#host-dialog .dialog-card")
    # The host's transport drops both before any handler, as the platform's does (blockkit.dev.transport).
    dropped = {e["type"]: e.get("dropped") for e in run.events() if e.get("kind") == "message" and e.get("dir") == "in"
               and e.get("type") in ("REQUEST_CONSENT", "REQUEST_SIGN_IN")}
    assert dropped == {"REQUEST_CONSENT": "before-ready", "REQUEST_SIGN_IN": "before-ready"}


def test_a_signed_out_viewer_is_told_every_declared_scope_and_sign_in_opens_once_ready(
        host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "consent-anon"), anonymous=True)
    run.wait_outcome("ready")
    # pageBlockHostLogic.grantedPageScopes: declared minus missing, and nothing is missing signed out.
    assert _first_token(run)["scopes"] == SCOPES
    assert not run.page.is_visible("#consent-reset")
    _post(run, {"type": "REQUEST_CONSENT"})  # no ledger signed out: nothing opens
    run.page.wait_for_timeout(500)
    assert not run.page.is_visible("#host-dialog .dialog-card")
    _post(run, {"type": "REQUEST_SIGN_IN", "payload": {"returnUrl": "/x"}})
    run.page.wait_for_selector(".dialog-card[data-type=REQUEST_SIGN_IN]")
    user = run.page.eval_on_selector("#sign-in-user", "s => Number(s.value)")
    with run.page.expect_navigation():
        run.page.click(".sign-in-confirm")
    run.wait_outcome("ready")
    init = _wait_received(run, "BLOCK_INIT")[0]["payload"]
    assert init["viewer"]["id"] == user and init["viewer"]["signedIn"] is True
    assert init["token"]["scopes"] == EXEMPT  # signed in now: a first visit for this viewer


def test_request_token_answers_the_token_the_host_holds(host: Any, make_block: Any) -> None:
    block = _block(make_block, "consent-token", behaviour={"afterReady": [
        {"type": "REQUEST_TOKEN", "payload": {"requestId": "a"}},
        {"type": "REQUEST_TOKEN", "payload": {"requestId": "b"}},
        {"type": "REQUEST_TOKEN"}]})
    run = host(block)
    run.wait_outcome("ready")
    raw = _first_token(run)["raw"]
    replies = _wait_received(run, "TOKEN_REFRESH_RESPONSE", 2)
    assert [r["payload"]["requestId"] for r in replies] == ["a", "b"]
    assert {r["payload"]["token"]["raw"] for r in replies} == {raw}  # the current token, not a fresh mint
    [push] = _wait_received(run, "TOKEN_REFRESH")
    assert push["payload"]["token"]["raw"] == raw


def test_token_refresh_is_pushed_two_minutes_before_expiry(host: Any, make_block: Any) -> None:
    run = host(_block(make_block, "consent-refresh-default"))
    run.wait_outcome("ready")
    # A 15-minute token: the next mint and push 13 minutes on (useBlockToken.ts REFRESH_LEAD_MS).
    assert run.page.evaluate("window.__blockkit.tokenRefreshInMs") == pytest.approx(13 * 60_000, abs=5_000)
    run.session.stop()
    # With a lead of 14:59, the push comes one second after the mint: the rule is expiry minus the lead.
    timings = dataclasses.replace(PLATFORM_TIMINGS, token_refresh_lead_ms=899_000, token_refresh_min_ms=200)
    again = host(_block(make_block, "consent-refresh-lead"), timings=timings)
    again.wait_outcome("ready")
    assert again.page.evaluate("window.__blockkit.tokenRefreshInMs") == pytest.approx(1_000, abs=900)
    first = _first_token(again)["raw"]
    [push] = _wait_received(again, "TOKEN_REFRESH", timeout=8_000)
    assert push["payload"]["token"]["raw"] != first and set(push["payload"]["token"]) == {"raw", "scopes", "expiresAt"}
    pushes = [e for e in trace.messages(again.events(), "out", "TOKEN_REFRESH")]
    assert pushes and pushes[0]["why"] == "expiry"


# --- blockkit dev --check -------------------------------------------------------------------------------

def _check(block: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "blockkit.cli", "dev", str(block), "--check", "--trace",
                           str(tmp_path / "check.jsonl")], capture_output=True, check=False, text=True, timeout=120,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_check_fails_a_block_that_needs_consent_and_never_asks(tmp_path: Path, make_block: Any,
                                                               browser: Any) -> None:
    never = _block(make_block, "consent-check-never", behaviour={"afterReady": [
        {"type": "GET_VIEWER", "payload": {"requestId": "v"}}]})
    result = _check(never, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("fail: the block needs the viewer's consent to user:read:self and never asks for it"
                            " (consent-check-never on page)"), result.stdout
    assert "REQUEST_CONSENT" in result.stdout and "Traceback" not in result.stderr

    asks = _block(make_block, "consent-check-asks", behaviour={"afterReady": [
        {"type": "GET_VIEWER", "payload": {"requestId": "v"}}, {"type": "REQUEST_CONSENT"}]})
    result = _check(asks, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("ok: handshake completed")
