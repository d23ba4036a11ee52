"""Every fix ``blockkit fix`` can make, registered under the code of the rule it answers.

Each fixer re-reads the document instead of trusting a finding's message, and
returns no edit once the problem is gone, so running ``fix`` twice changes
nothing the second time.
"""

from __future__ import annotations

from typing import Iterator

from blockkit.fix.registry import FixTarget, fixer
from blockkit.jsstr import js_split_whitespace, js_trim, non_html_separators
from blockkit.platform import IFRAME_DEFAULTS, IFRAME_REQUIRED_MEMBERS, SCHEMA_ID
from blockkit.report import Edit, Finding

# Codes of the rules whose findings these fixers repair (the rules live under blockkit.rules).
BYTE_ORDER_MARK = "BK003"
SERVER_OWNED_KEY = "BK110"
IFRAME_MEMBER_MISSING = "BK216"
PAGE_WITHOUT_IFRAME = "BK219"
SCHEMA_URL_MISSING = "BK312"
SCHEMA_URL_NOT_CANONICAL = "BK313"
REPOSITORY_FORM = "BK314"
TAGLINE_WHITESPACE = "BK315"
DUPLICATE_SCOPE = "BK302"
SANDBOX_SEPARATOR = "BK320"
UNKNOWN_KEY = "BK301"

# Unknown keys that are safe to delete: stale keys the platform ignores and no block reads.
_STALE_KEYS = ("/appId",)


@fixer(BYTE_ORDER_MARK, "safe", "remove the byte order mark")
def remove_byte_order_mark(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    if target.editor.text.startswith("\ufeff"):
        yield Edit(0, 1, "")


def _remove_key(finding: Finding) -> str:
    return f"remove {finding.pointer.lstrip('/').replace('/', '.') or 'the key'} (the server sets it)"


@fixer(SERVER_OWNED_KEY, "safe", "remove keys the server owns (trustTier, iframe.src)", title=_remove_key)
def remove_server_owned(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    for pointer in sorted({f.pointer for f in findings}):
        edit = target.editor.remove(pointer)
        if edit is not None:
            yield edit


@fixer(UNKNOWN_KEY, "safe", "remove the stale top-level appId",
       applies=lambda finding: finding.pointer in _STALE_KEYS)
def remove_stale_keys(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    # Other unknown keys may be a typo of a real key or data the block reads: only a human can decide.
    for pointer in sorted({f.pointer for f in findings} & set(_STALE_KEYS)):
        edit = target.editor.remove(pointer)
        if edit is not None:
            yield edit


@fixer(SCHEMA_URL_MISSING, "safe", f"add \"$schema\": \"{SCHEMA_ID}\" as the first key")
@fixer(SCHEMA_URL_NOT_CANONICAL, "safe", f"set $schema to {SCHEMA_ID}")
def set_schema_url(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    current = target.document.get("$schema")
    if current == SCHEMA_ID:
        return
    if "$schema" in target.document:
        edit = target.editor.replace_value("/$schema", SCHEMA_ID)
    else:
        edit = target.editor.insert_first("", "$schema", SCHEMA_ID)
    if edit is not None:
        yield edit


@fixer(REPOSITORY_FORM, "safe", "rewrite repository in its stored form https://<host>/<owner>/<repo>")
def normalise_repository(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    from blockkit.urls import normalize_repository

    value = target.document.get("repository")
    stored = normalize_repository(value) if isinstance(value, str) else None
    if stored is not None and stored != value:
        edit = target.editor.replace_value("/repository", stored)
        if edit is not None:
            yield edit


@fixer(TAGLINE_WHITESPACE, "safe", "trim whitespace around the tagline")
def trim_tagline(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    value = target.document.get("tagline")
    if not isinstance(value, str):
        return
    trimmed = js_trim(value)
    # A blank tagline has nothing to keep: trimming would only trade one error for another.
    if trimmed and trimmed != value:
        edit = target.editor.replace_value("/tagline", trimmed)
        if edit is not None:
            yield edit


@fixer(DUPLICATE_SCOPE, "safe", "drop repeated scopes, keeping the first of each")
def drop_duplicate_scopes(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    scopes = target.document.get("scopes")
    if not isinstance(scopes, list):
        return
    seen: set[str] = set()
    for index, scope in enumerate(scopes):
        if not isinstance(scope, str):
            continue
        if scope in seen:
            edit = target.editor.remove(f"/scopes/{index}")
            if edit is not None:
                yield edit
        seen.add(scope)


@fixer(SANDBOX_SEPARATOR, "safe", "separate iframe.sandbox tokens with plain spaces")
def plain_sandbox_separators(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    # Safe: the platform reads the same tokens either way; the browser now reads them too.
    iframe = target.document.get("iframe")
    sandbox = iframe.get("sandbox") if isinstance(iframe, dict) else None
    if isinstance(sandbox, str) and non_html_separators(sandbox):
        edit = target.editor.replace_value("/iframe/sandbox", " ".join(js_split_whitespace(sandbox)))
        if edit is not None:
            yield edit


@fixer(PAGE_WITHOUT_IFRAME, "unsafe",
       "add an iframe object with the documented defaults (check the values suit the block)")
@fixer(IFRAME_MEMBER_MISSING, "unsafe",
       "add the missing iframe members with their documented defaults (check the values suit the block)")
def add_iframe_members(target: FixTarget, findings: list[Finding]) -> Iterator[Edit]:
    # Unsafe: a default height or sandbox may not suit the block, so the user should review the result.
    if "iframe" not in target.document:
        edit = target.editor.insert_last("", [("iframe", dict(IFRAME_DEFAULTS))])
    else:
        iframe = target.document["iframe"]
        if not isinstance(iframe, dict):
            return
        missing = [(key, IFRAME_DEFAULTS[key]) for key in IFRAME_REQUIRED_MEMBERS if key not in iframe]
        edit = target.editor.insert_last("/iframe", missing)
    if edit is not None:
        yield edit
