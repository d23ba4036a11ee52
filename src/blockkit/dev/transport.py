"""The platform host's transport rules, as data: what it drops before any handler runs.

The host page (``static/host.js``) applies these to every message the block posts, in the
platform's order (civitai/civitai ``usePostMessage.ts`` and the handlers of
``PageBlockHost.tsx`` / ``IframeHost.tsx`` at ebed661):

1. a message whose type the surface's host has no handler for is dropped first, so it
   costs nothing (no rate budget, no dedup entry, no request to the host server);
2. a ``requestId`` (in ``payload``, else at the top level) seen in the last
   :data:`DEDUP_WINDOW_MS` drops the message; the id is remembered either way;
3. past :data:`RATE_LIMIT_MAX_MESSAGES` handled messages in :data:`RATE_LIMIT_WINDOW_MS`
   the message is dropped, silently;
4. then the handler: a request without a usable ``payload.requestId`` is dropped, and a
   few types are refused until BLOCK_READY (:func:`before_ready_rules`).

The host server records each drop in the trace, and :mod:`blockkit.dev.contract` explains
it as a violation (:data:`DROP_REASONS`), so the developer learns why no reply came.
"""

from __future__ import annotations

from typing import Any

from blockkit.dev.protocol import BLOCK_TO_HOST

RATE_LIMIT_WINDOW_MS = 1000
RATE_LIMIT_MAX_MESSAGES = 30
DEDUP_WINDOW_MS = 5000
# The platform caps its map of seen ids so a flood of fresh ids cannot grow it.
DEDUP_MAX_IDS = 256

# Why the host dropped a message (the names the trace and the violations use).
RATE_LIMITED = "rate-limited"
DUPLICATE_REQUEST_ID = "duplicate-request-id"
NO_REQUEST_ID = "no-request-id"
BEFORE_READY = "before-ready"
# Not a drop reason of its own: no handler on this surface (contract explains unknown types).
NOT_HANDLED = "not-handled"
DROP_REASONS = (RATE_LIMITED, DUPLICATE_REQUEST_ID, NO_REQUEST_ID, BEFORE_READY)

# sandbox.ts: the tokens a manifest may ask for; allow-scripts is always there.
SANDBOX_ALLOWED_TOKENS = (
    "allow-scripts",
    "allow-forms",
    "allow-popups",
    "allow-modals",
    "allow-pointer-lock",
    "allow-downloads",
)
SANDBOX_MINIMAL = ("allow-scripts",)

# Types the page host registers no handler for (PageBlockHost.tsx has none).
_PAGE_UNHANDLED = frozenset({"RESIZE_IFRAME", "TRACK_EVENT"})
# The model slot has no TRACK_EVENT handler either; the rest is protocol.py's slot_bridged.
_SLOT_UNHANDLED = frozenset({"TRACK_EVENT"})

# Requests whose handler needs a non-empty requestId (pageBlockHostLogic.ts's resolvers,
# openBuzzPurchaseGate.ts, the page's SET_USER_CHECKPOINT); the others take any string.
NON_EMPTY_ID_TYPES = frozenset({
    "OPEN_BUZZ_PURCHASE",
    "OPEN_CHECKPOINT_PICKER",
    "OPEN_RESOURCE_PICKER",
    "OPEN_IMAGE_UPLOAD",
    "PUBLISH_GENERATION_OUTPUTS",
    "GET_IMAGES_BY_IDS",
    "SET_USER_CHECKPOINT",
})
# REQUEST_TOKEN without an id is answered with a TOKEN_REFRESH push, not dropped.
_ID_OPTIONAL = frozenset({"REQUEST_TOKEN"})


def handled_types(surface_kind: str) -> list[str]:
    """The block -> host types the surface's host has a handler for (the rest is dropped first)."""
    if surface_kind == "slot":
        return sorted(t for t, spec in BLOCK_TO_HOST.items() if spec.slot_bridged and t not in _SLOT_UNHANDLED)
    return sorted(t for t in BLOCK_TO_HOST if t not in _PAGE_UNHANDLED)


def request_rules() -> dict[str, dict[str, bool]]:
    """Each request type, and whether its requestId must be non-empty."""
    return {
        t: {"nonEmptyId": t in NON_EMPTY_ID_TYPES}
        for t, spec in BLOCK_TO_HOST.items()
        if spec.is_request and t not in _ID_OPTIONAL
    }


def before_ready_rules(surface_kind: str) -> dict[str, dict[str, Any]]:
    """What the host does with a type it gets before BLOCK_READY, when not its usual answer.

    ``drop``: nothing. ``reply``: this reply at once (with the requestId), no dialog;
    ``idNonEmpty`` says whether an empty requestId still gets it.
    """
    if surface_kind == "slot":
        # IframeHost: the buzz modal, sign-in and consent wait for ready, silently.
        return {t: {"action": "drop"} for t in ("OPEN_BUZZ_PURCHASE", "REQUEST_CONSENT", "REQUEST_SIGN_IN")}
    return {
        # PageBlockHost 2036-2038: "NEVER HANG", answered not purchased.
        "OPEN_BUZZ_PURCHASE": {"action": "reply", "reply": "BUZZ_PURCHASE_RESULT",
                               "payload": {"purchased": False}, "idNonEmpty": True},
        # PageBlockHost 3044-3062: the dismissed shape, a bare {requestId}.
        "OPEN_IMAGE_UPLOAD": {"action": "reply", "reply": "IMAGE_UPLOAD_RESULT", "payload": {},
                              "idNonEmpty": False},
        "NAVIGATE": {"action": "drop"},
        "REQUEST_CONSENT": {"action": "drop"},
        "REQUEST_SIGN_IN": {"action": "drop"},
    }


def effective_sandbox(declared: str) -> str:
    """The iframe's sandbox as the platform builds it for an unverified app (sandbox.ts).

    The manifest's tokens that the allowlist knows, after ``allow-scripts``, each once, in
    the manifest's order. ``allow-same-origin`` is never added: the platform adds it for
    verified and internal apps, the spec forbids it beside ``allow-scripts`` (the spec wins).
    """
    tokens = list(SANDBOX_MINIMAL)
    for token in declared.split():
        if token in SANDBOX_ALLOWED_TOKENS and token not in tokens:
            tokens.append(token)
    return " ".join(tokens)


def dropped_sandbox_tokens(declared: str) -> list[str]:
    """The manifest's tokens the platform leaves out of the sandbox."""
    return [t for t in dict.fromkeys(declared.split()) if t not in SANDBOX_ALLOWED_TOKENS]


def as_json(surface_kind: str) -> dict[str, Any]:
    """The rules as the host page reads them."""
    return {
        "rateWindowMs": RATE_LIMIT_WINDOW_MS,
        "rateMax": RATE_LIMIT_MAX_MESSAGES,
        "dedupWindowMs": DEDUP_WINDOW_MS,
        "dedupMaxIds": DEDUP_MAX_IDS,
        "handled": handled_types(surface_kind),
        "requests": request_rules(),
        "beforeReady": before_ready_rules(surface_kind),
    }
