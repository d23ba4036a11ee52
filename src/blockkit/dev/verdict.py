"""Words for a :class:`CheckResult`: one verdict line, then the evidence."""

from __future__ import annotations

import json
from typing import Any

from blockkit.dev.check import COLLAPSED, FAILED, READY, CheckResult
from blockkit.dev.failures import failure_words
from blockkit.dev.terminal import printable

HANDSHAKE_COMPLETED = "handshake-completed"
NEVER_READY = "never-sent-block-ready"
CONTRACT_VIOLATIONS = "contract-violations"
CONSOLE_ERRORS = "console-errors"
FAILED_CALLS = "failed-calls"
# Every failing call was refused for a scope the viewer has not granted, and the block never asked.
NEEDS_CONSENT = "needs-consent"
JSON_VERSION = 1
# How each cause of a failed call reads in the text verdict.
CAUSE_WORDS = {
    "request": "the block's request",
    "platform": "a platform error",
    "viewer": "the viewer's state; reported, does not fail the check",
    "consent": "a scope the viewer has not granted; the block never sent REQUEST_CONSENT",
}


def verdict_code(result: CheckResult) -> str:
    if result.outcome != READY:
        return NEVER_READY
    if result.violations:
        return CONTRACT_VIOLATIONS
    if result.console_errors:
        return CONSOLE_ERRORS
    if result.failing_calls:
        if all(c["cause"] == "consent" for c in result.failing_calls):
            return NEEDS_CONSENT
        return FAILED_CALLS
    return HANDSHAKE_COMPLETED


def exit_code(result: CheckResult) -> int:
    return 0 if result.ok else 1


def render_text(result: CheckResult) -> str:
    """The verdict for a terminal: every text that came from the block is escaped (:func:`printable`)."""
    where = f"({printable(result.block_id)} on {printable(result.surface)})"
    code = verdict_code(result)
    handshake = (
        f"handshake completed in {result.handshake_ms:.0f} ms" if result.handshake_ms is not None else ""
    )
    if handshake and result.attempts > 1:
        # The page host retried: viewers stared at an empty frame for the whole first attempt.
        handshake += (f", on attempt {result.attempts}: the first attempt got no BLOCK_READY before the"
                      " host gave up on it")
    if code == HANDSHAKE_COMPLETED:
        lines = [f"ok: {handshake} {where}"]
    elif code == NEVER_READY:
        lines = [f"fail: never sent BLOCK_READY {where}: {_gave_up(result)}; {_what_it_sent(result)}"]
    elif code == CONTRACT_VIOLATIONS:
        lines = [f"fail: contract violations ({len(result.violations)}) {where}; {handshake}"]
    elif code == CONSOLE_ERRORS:
        lines = [f"fail: console errors ({len(result.console_errors)}) {where}; {handshake}"]
    elif code == NEEDS_CONSENT:
        scopes = sorted({s for c in result.failing_calls for s in c.get("consentScopes") or ()})
        lines = [f"fail: the block needs the viewer's consent to {printable(', '.join(scopes))} and never asks"
                 f" for it {where}; {handshake}",
                 "  on the platform a viewer's first token holds only the consent-exempt scopes: post"
                 " REQUEST_CONSENT (on the action that needs the scope), then retry once TOKEN_REFRESH"
                 " brings the scope; docs/dev.md \"Consent\""]
    else:
        lines = [f"fail: failed brokered calls ({len(result.failing_calls)}) {where}; {handshake}"]
    if result.violations:
        lines.append(f"contract violations ({len(result.violations)}):")
        lines += [
            f"  - {line}{_times(count)}" for line, count in _counted(
                f"{v['kind']}{' ' + printable(v['type']) if v.get('type') else ''}: {printable(v['explanation'])}"
                for v in result.violations)
        ]
    if result.console_errors:
        lines.append(f"console errors ({len(result.console_errors)}):")
        lines += [f"  - {source}: {printable(text)}{_times(count)}"
                  for (source, text), count in _counted((e.source, e.text) for e in result.console_errors)]
    if result.failed_calls:
        lines.append(f"failed brokered calls ({len(result.failed_calls)}):")
        lines += [line + _times(count) for line, count in _counted(_failed_call_line(c) for c in result.failed_calls)]
    if result.trace_path:
        lines.append(f"trace: {result.trace_path}")
    return "\n".join(lines)


def render_json(result: CheckResult) -> str:
    document = {
        "version": JSON_VERSION,
        "ok": result.ok,
        "verdict": verdict_code(result),
        "blockId": result.block_id,
        "surface": result.surface,
        "outcome": result.outcome,
        "handshakeMs": result.handshake_ms,
        "attempts": result.attempts,
        "sentTypes": result.sent_types,
        "violations": result.violations,
        "consoleErrors": [e.as_json() for e in result.console_errors],
        "trace": result.trace_path,
        # An addition to version 1: every brokered call that failed (cancelled dialogs left out).
        "failedCalls": result.failed_calls,
    }
    return json.dumps(document, indent=2)


def _counted(items: Any) -> list[tuple[Any, int]]:
    """Each distinct item once, in the order first seen, with how often it came."""
    counts: dict[Any, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return list(counts.items())


def _times(count: int) -> str:
    return f" ({count} times)" if count > 1 else ""


def _failed_call_line(call: dict[str, Any]) -> str:
    return (f"  - {printable(str(call.get('type')))}: {printable(failure_words(call))}"
            f" [{CAUSE_WORDS.get(call.get('cause') or '', call.get('cause'))}]")


def _gave_up(result: CheckResult) -> str:
    if result.outcome == COLLAPSED:
        return "the slot gave up and collapsed"
    if result.outcome == FAILED:
        return f"the page host gave up after {result.attempts} attempts and showed its failure card"
    return "the host page never reached a verdict"


def _what_it_sent(result: CheckResult) -> str:
    if not result.sent_types:
        return "the block sent no message at all"
    return "the block sent only " + printable(", ".join(result.sent_types))
