"""The bridge contract: which block -> host messages break it, and why.

Every check returns :class:`Violation` values with an explanation a block
author can act on. The host server runs :func:`check_inbound` on each message
the host page receives; the host page reports requests it saw go unanswered
and :func:`unanswered_request` explains them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from blockkit.dev import transport
from blockkit.dev.protocol import (
    ENVELOPE_KEYS,
    HOST_TO_BLOCK,
    block_message,
    scopes_satisfied,
)

ENVELOPE = "envelope"
UNKNOWN_TYPE = "unknown-type"
PAYLOAD = "payload"
UNDECLARED_SCOPE = "undeclared-scope"
UNANSWERED_REQUEST = "unanswered-request"
# Messages the host dropped (blockkit.dev.transport): each kind is the drop's reason.
RATE_LIMITED = transport.RATE_LIMITED
DUPLICATE_REQUEST_ID = transport.DUPLICATE_REQUEST_ID
NO_REQUEST_ID = transport.NO_REQUEST_ID
BEFORE_READY = transport.BEFORE_READY

# How the host page names the JavaScript type of what arrived.
JS_OBJECT = "object"


@dataclass(frozen=True)
class Violation:
    kind: str
    message_type: str | None
    explanation: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def one_line(self) -> str:
        subject = f" {self.message_type}" if self.message_type else ""
        return f"{self.kind}{subject}: {self.explanation}"


def check_inbound(
    js_type: str, data: Any, declared_scopes: Iterable[str], *, skip_fields: Iterable[str] = ()
) -> list[Violation]:
    """Judge one message the block posted to the host.

    ``js_type`` is what JavaScript's ``typeof`` made of it on the host page
    (``array`` and ``null`` told apart), ``data`` its JSON form. ``skip_fields`` are payload
    members not to report missing (a drop already says so: :func:`dropped_message`).
    """
    skipped = frozenset(skip_fields)
    if js_type != JS_OBJECT or not isinstance(data, dict):
        return [_not_an_object(js_type, data)]
    type_ = data.get("type")
    if not isinstance(type_, str) or not type_:
        return [
            Violation(
                ENVELOPE,
                None,
                f"the message has no string `type` (it has keys {_keys(data)}); the host "
                "dispatches on `type` and drops this message",
            )
        ]
    violations: list[Violation] = []
    stray = sorted(set(data) - ENVELOPE_KEYS)
    if stray:
        violations.append(
            Violation(
                ENVELOPE,
                type_,
                f"top-level key(s) {', '.join(stray)} sit outside `payload`; the host reads only "
                "`type` and `payload`, so it never sees them. Move them into `payload`",
            )
        )
    payload = data.get("payload")
    if "payload" in data and payload is not None and not isinstance(payload, dict):
        violations.append(
            Violation(ENVELOPE, type_, f"`payload` is {_describe(payload)}; it must be an object")
        )
        payload = None
    spec = block_message(type_)
    if spec is None:
        violations.append(Violation(UNKNOWN_TYPE, type_, _unknown_type_explanation(type_)))
        return violations
    missing = [
        f"`{name}` ({js})"
        for name, js in spec.fields.items()
        if name not in skipped and not _has_js_type((payload or {}).get(name), js)
    ]
    if missing:
        why = (
            "; without `requestId` the reply cannot be matched to the request"
            if any(m.startswith("`requestId`") for m in missing)
            else ""
        )
        violations.append(
            Violation(PAYLOAD, type_, f"payload lacks {', '.join(missing)}{why}")
        )
    declared = frozenset(declared_scopes)
    if not scopes_satisfied(spec, declared):
        needed = " or ".join(sorted(spec.scopes))
        have = ", ".join(sorted(declared)) or "none"
        violations.append(
            Violation(
                UNDECLARED_SCOPE,
                type_,
                f"needs the scope {needed}, which the manifest does not declare "
                f"(declared: {have}). On the platform every such call fails; add the scope to "
                "`scopes` in block.manifest.json",
            )
        )
    return violations


def unanswered_request(type_: str | None, request_id: str, waited_ms: float, reason: str | None = None) -> Violation:
    """A request-style message that no reply echoed within ``waited_ms`` (``reason``: why the host sent none)."""
    spec = block_message(type_) if type_ else None
    if reason is not None:
        pass
    elif spec is None:
        reason = "the platform host has no handler for this type, so no reply will ever come"
    elif spec.reply is None:
        reason = (
            f"{type_} is not a request: the platform sends no reply to it, whatever `requestId` "
            "it carries"
        )
    else:
        reason = f"the host never sent {spec.reply}"
    return Violation(
        UNANSWERED_REQUEST,
        type_,
        f"request {request_id!r} got no reply within {waited_ms:.0f} ms: {reason}. A block that "
        "awaits it hangs until its own timeout",
    )


def dropped_message(reason: str, type_: str | None, data: Any, detail: dict[str, Any] | None = None) -> Violation:
    """Why the host dropped (or refused unheard) a message: ``reason`` is one of transport.DROP_REASONS.

    The explanations name no count or time, so that a flood of the same drop reads as one line
    with a count in the verdict.
    """
    detail = detail or {}
    if reason == RATE_LIMITED:
        why = (
            f"the platform's host takes at most {transport.RATE_LIMIT_MAX_MESSAGES} messages a second from a "
            "block (every type it handles counts, BLOCK_READY and RESIZE_IFRAME included) and drops the rest "
            "without a reply or a word. Space the messages out, or ask for less at once"
        )
    elif reason == DUPLICATE_REQUEST_ID:
        why = (
            f"requestId {detail.get('requestId')!r} was used again within "
            f"{transport.DEDUP_WINDOW_MS // 1000} s; the platform's host drops a repeated requestId for that "
            "long, so this request gets no reply. Give every request, a retry included, a fresh id"
        )
    elif reason == NO_REQUEST_ID:
        payload = data.get("payload") if isinstance(data, dict) else None
        request_id = payload.get("requestId") if isinstance(payload, dict) else None
        if request_id == "":
            what = "an empty `payload.requestId`, which this handler refuses"
        elif isinstance(data, dict) and "requestId" in data:
            what = "its `requestId` at the top level, where the handler does not look"
        elif isinstance(data, dict) and data.get("payload") is not None and not isinstance(payload, dict):
            what = "a `payload` that is not an object, so no `payload.requestId`"
        else:
            what = "no string `payload.requestId`"
        why = (
            f"{type_} is a request, and it came with {what}: the platform's host drops it and sends no "
            "reply. Put a fresh string id in `payload.requestId`"
        )
    elif reason == BEFORE_READY:
        answered = detail.get("reply")
        if answered:
            why = (
                f"{type_} came before BLOCK_READY: the platform's host opens nothing then and answers "
                f"{answered} {json.dumps(detail.get('payload') or {}, sort_keys=True)} at once. Send BLOCK_READY first"
            )
        else:
            why = (
                f"{type_} came before BLOCK_READY: the platform's host drops it until the block is ready. "
                "Send BLOCK_READY first"
            )
    else:
        raise ValueError(f"not a drop reason: {reason!r}")
    return Violation(reason, type_, why)


def _not_an_object(js_type: str, data: Any) -> Violation:
    hint = ""
    if js_type == "string" and isinstance(data, str):
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "type" in parsed:
            hint = " It looks like a JSON string: post the object itself, not JSON.stringify(...)"
    return Violation(
        ENVELOPE,
        None,
        f"the message is {_js_article(js_type)}, not an object {{type, payload}}; the host "
        f"drops it.{hint}",
    )


def _unknown_type_explanation(type_: str) -> str:
    if type_ in HOST_TO_BLOCK:
        return f"{type_} is a host -> block message; the host ignores it when a block sends it"
    upper = type_.upper().replace("-", "_")
    if upper != type_ and block_message(upper) is not None:
        return f"the host knows no {type_!r}; types are case-sensitive: did you mean {upper}?"
    return f"the host knows no message {type_!r} and ignores it"


def _has_js_type(value: Any, js: str) -> bool:
    if js == "string":
        return isinstance(value, str)
    if js == "boolean":
        return isinstance(value, bool)
    if js == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return value is not None


def _keys(data: dict[str, Any]) -> str:
    return ", ".join(sorted(map(str, data))) or "none"


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _js_article(js_type: str) -> str:
    return {
        "array": "an array",
        "null": "null",
        "undefined": "undefined",
        "unserializable": "a value JSON cannot carry",
    }.get(js_type, f"a {js_type}")
