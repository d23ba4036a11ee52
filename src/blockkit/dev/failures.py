"""Brokered calls that failed, and whether each one fails ``blockkit dev --check``.

A brokered call is a request the host answered from the local platform (a bridge message, or
the block's own HTTP call to the emulated catalogue with its token); the trace holds each as a
``call`` event. A failed one is sorted by who caused it:

| cause | what it means | fails --check |
|---|---|---|
| ``viewer`` | the viewer's state or choice refused it (signed out, short of Buzz, a daily ceiling) | no: a real viewer meets these, and the block must cope |
| ``request`` | the block asked for something malformed or not allowed (bad input, an undeclared scope, an unknown good, over its budget) | yes |
| ``platform`` | the local platform failed (a 5xx, a failed or expired workflow, an error in a handler) | yes |
| ``consent`` | the token lacks a scope the viewer has not granted yet (withheld at the mint, as on the platform) | yes, unless the block sent REQUEST_CONSENT: a block that needs a gated scope must ask for it |

A dialog the developer cancelled is no failure at all: the viewer said no, and it is not listed.
"""

from __future__ import annotations

from typing import Any

from blockkit.dev import trace

VIEWER = "viewer"
REQUEST = "request"
PLATFORM = "platform"
CONSENT = "consent"
CONSENT_CODE = "consent_required"

# The viewer cancelled a host dialog: not a failure.
CANCELED_CODES = frozenset({"CANCELED"})
# Refusals that come from who the viewer is or what they hold, not from the block's request.
VIEWER_CODES = frozenset({
    "SIGN_IN_REQUIRED", "sign_in_required",  # signed out
    "insufficient_buzz", "insufficient_funds",  # short of Buzz (a workflow; a good)
    "already_owned",  # buying a good the viewer owns already
    "daily_ceiling",  # the viewer's daily goods ceiling
    "LIMIT_REACHED",  # the viewer's live entries on a shared board
    "already_finished",  # cancelling a workflow that finished meanwhile: a race the block cannot avoid
    "above_maturity",  # a wildcard pack above the viewer's browsing level
})
# Refusals from the platform itself.
PLATFORM_CODES = frozenset({"PLATFORM_ERROR", "workflow_failed", "workflow_expired"})
# HTTP statuses that say the viewer's state, not the request, was refused.
VIEWER_STATUSES = frozenset({402, 429})


def cause_of(error: str | None, status: int | None) -> str:
    if error == CONSENT_CODE:
        return CONSENT
    if error in VIEWER_CODES:
        return VIEWER
    if error in PLATFORM_CODES or (status is not None and status >= 500):
        return PLATFORM
    if status in VIEWER_STATUSES:
        return VIEWER
    return REQUEST


def failed_calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each failed brokered call in the trace, in order, cancelled dialogs left out.

    Each item is ``{type, via, error, status, message, requestId, cause, failsCheck, seq}``, plus
    ``consentScopes`` for a call refused for want of consent.
    """
    found = []
    # A block that asks for consent copes with a first visit: its refusals are the viewer's state then.
    asked = any(event.get("kind") == trace.MESSAGE and event.get("dir") == "in"
                and event.get("type") == "REQUEST_CONSENT" for event in events)
    for event in events:
        if event.get("kind") != trace.CALL or event.get("ok") is not False:
            continue
        error = event.get("error")
        error = str(error) if error is not None else None
        if error in CANCELED_CODES:
            continue
        result = event.get("result") if isinstance(event.get("result"), dict) else {}
        status = event.get("status", result.get("status"))
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        message = event.get("message", result.get("message"))
        cause = cause_of(error, status)
        found.append({
            "type": event.get("type"),
            "via": event.get("via", "bridge"),
            "error": error,
            "status": status,
            "message": str(message) if message is not None else None,
            "requestId": result.get("requestId"),
            "cause": VIEWER if cause == CONSENT and asked else cause,
            "failsCheck": cause != VIEWER and not (cause == CONSENT and asked),
            "seq": event.get("seq"),
            **({"consentScopes": event["consentScopes"]} if isinstance(event.get("consentScopes"), list) else {}),
        })
    return found


def failure_words(call: dict[str, Any]) -> str:
    """What went wrong with a failed call, each fact said once: the error, its HTTP status, the message.

    The status is left out when the error already reads ``HTTP <status>`` (the block's own HTTP calls
    carry it as their error), and the message when what came before already says it.
    """
    error, status, message = call.get("error"), call.get("status"), call.get("message")
    words = str(error) if error is not None else ""
    if status is not None and f"HTTP {status}" not in words:
        words = f"{words} (HTTP {status})" if words else f"HTTP {status}"
    if message and str(message).strip().lower() not in words.lower():
        words = f"{words}: {message}" if words else str(message)
    return words or "failed"
