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


def check_inbound(js_type: str, data: Any, declared_scopes: Iterable[str]) -> list[Violation]:
    """Judge one message the block posted to the host.

    ``js_type`` is what JavaScript's ``typeof`` made of it on the host page
    (``array`` and ``null`` told apart), ``data`` its JSON form.
    """
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
        if not _has_js_type((payload or {}).get(name), js)
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
