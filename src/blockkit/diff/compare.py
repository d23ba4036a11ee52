"""Comparing two versions of a manifest as review would.

Findings are positioned in the NEW file, which is the file the report is
about: a thing that exists in NEW points at itself; a thing that was removed
points at the NEW container it left (the catalogue, the scope list, or the
top-level object when the container is gone too) and its message says where
it was in OLD.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Optional

from blockkit.diff import rules as R
from blockkit.diff import semver
from blockkit.jsstr import js_trim
from blockkit.platform import SENSITIVE_SCOPES
from blockkit.report import Finding
from blockkit.rules.base import Hit, Rule, as_list, declared_scopes, pointer_join
from blockkit.source import Source

# Good fields whose change alters what is sold (price has its own rule).
_CATALOGUE_FIELDS = ("title", "kind", "description", "justification", "payload")


def comparable(source: Source) -> Optional[str]:
    """None when ``source`` holds a manifest object to compare, else why not."""
    if source.text is None or not source.has_document:
        return "it cannot be parsed"
    if not isinstance(source.data, dict):
        return "it is not a JSON object"
    return None


def compare(old: Source, new: Source) -> list[Finding]:
    """Diff findings (BK4xx) for going from ``old`` to ``new``, positioned in ``new``.

    Returns no findings when either side is not a manifest object: the parse
    layer reports that on its own file.
    """
    from blockkit.engine import _finding

    if comparable(old) is not None or comparable(new) is not None:
        return []
    findings = [_finding(new, rule, hit) for rule, hit in compare_documents(old.data, new.data)]
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    return findings


def compare_documents(old: dict[str, Any], new: dict[str, Any]) -> Iterator[tuple[Rule, Hit]]:
    yield from _block_id(old, new)
    yield from _version(old, new)
    yield from _scopes(old, new)
    yield from _goods(old, new)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _block_id(old: dict[str, Any], new: dict[str, Any]) -> Iterator[tuple[Rule, Hit]]:
    before, after = old.get("blockId"), new.get("blockId")
    if isinstance(before, str) and isinstance(after, str) and before != after:
        yield R.BLOCK_ID_CHANGED, Hit(
            "/blockId", f"blockId changed from {_show(before)} to {_show(after)}: that is a different app",
            hint=f"keep \"blockId\": {_show(before)}")


def _version(old: dict[str, Any], new: dict[str, Any]) -> Iterator[tuple[Rule, Hit]]:
    if old == new:
        return  # nothing changed, so nothing needs a new version
    before, after = semver.parse(old.get("version")), semver.parse(new.get("version"))
    if before is None or after is None:
        return  # an invalid version is the schema layer's finding
    if after > before:
        return
    if after.same_precedence(before):
        message = f"version is still {_show(after.text)} although the manifest changed"
    else:
        message = f"version {_show(after.text)} is lower than the previous {_show(before.text)}"
    yield R.VERSION_NOT_INCREASED, Hit("/version", message,
                                       hint=f"use a version above {before.text}, e.g. {_next_patch(before)}")


def _next_patch(version: semver.Version) -> str:
    if version.prerelease:
        return f"{version.major}.{version.minor}.{version.patch}"  # the release ranks above its prereleases
    return f"{version.major}.{version.minor}.{version.patch + 1}"


def _scopes(old: dict[str, Any], new: dict[str, Any]) -> Iterator[tuple[Rule, Hit]]:
    before, after = declared_scopes(old), declared_scopes(new)
    known = set(before)
    for index, scope in enumerate(after):
        if scope in known:
            continue
        known.add(scope)  # a repeated new scope is reported once
        if scope in SENSITIVE_SCOPES:
            yield R.SENSITIVE_SCOPE_ADDED, Hit(
                pointer_join("/scopes", index),
                f"sensitive scope {_show(scope)} was added: viewers must consent again and it needs a justification",
                hint=f"make sure \"scopeJustifications\" explains why the block needs {_show(scope)}")
        else:
            yield R.SCOPE_ADDED, Hit(pointer_join("/scopes", index),
                                     f"scope {_show(scope)} was added: viewers must consent again")
    remaining = set(after)
    where = "/scopes" if isinstance(new.get("scopes"), list) else ""
    reported: set[str] = set()
    for index, scope in enumerate(before):
        if scope not in remaining and scope not in reported:
            reported.add(scope)
            yield R.SCOPE_REMOVED, Hit(where, f"scope {_show(scope)} was removed (it was scopes[{index}])",
                                       at="open", hint="make sure the block no longer calls what it allowed")


def _goods_by_id(document: dict[str, Any]) -> dict[str, tuple[int, dict[str, Any]]]:
    found: dict[str, tuple[int, dict[str, Any]]] = {}
    for index, good in enumerate(as_list(document.get("goods"))):
        if isinstance(good, dict) and isinstance(good.get("id"), str):
            found.setdefault(good["id"], (index, good))  # a repeated id is the server layer's finding
    return found


def _same_good(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two goods with different ids look like one good renamed."""
    title_a, title_b = a.get("title"), b.get("title")
    if isinstance(title_a, str) and isinstance(title_b, str) and js_trim(title_a) and \
            js_trim(title_a).casefold() == js_trim(title_b).casefold():
        return True
    rest_a = {k: v for k, v in a.items() if k != "id"}
    rest_b = {k: v for k, v in b.items() if k != "id"}
    return bool(rest_a) and rest_a == rest_b


def _goods(old: dict[str, Any], new: dict[str, Any]) -> Iterator[tuple[Rule, Hit]]:
    before, after = _goods_by_id(old), _goods_by_id(new)
    removed = [i for i in before if i not in after]
    added = [i for i in after if i not in before]
    renamed: dict[str, str] = {}  # new id -> old id
    for old_id in removed:
        match = next((new_id for new_id in added
                      if new_id not in renamed and _same_good(before[old_id][1], after[new_id][1])), None)
        if match is not None:
            renamed[match] = old_id
    catalogue = "/goods" if isinstance(new.get("goods"), list) else ""
    for old_id in removed:
        if old_id in renamed.values():
            continue
        index = before[old_id][0]
        yield R.GOOD_REMOVED, Hit(
            catalogue, f"good {_show(old_id)} was removed (it was goods[{index}]): entitlements already sold "
                       "for it are orphaned", at="open",
            hint="keep the good, or keep honouring its entitlement in the block")
    for new_id, (index, good) in after.items():
        base = pointer_join("/goods", index)
        if new_id in renamed:
            old_id = renamed[new_id]
            yield R.GOOD_RENAMED, Hit(
                pointer_join(base, "id"), f"good id {_show(old_id)} was renamed to {_show(new_id)}: entitlements "
                                          f"sold under {_show(old_id)} are orphaned",
                hint=f"keep \"id\": {_show(old_id)} and change only the title or description")
            yield from _good_changes(before[old_id][1], good, base, new_id)
        elif new_id in before:
            yield from _good_changes(before[new_id][1], good, base, new_id)
        else:
            yield R.CATALOGUE_CHANGED, Hit(
                base, f"good {_show(new_id)} was added: catalogue changes need a new version and re-review",
                at="open")


def _good_changes(old: dict[str, Any], new: dict[str, Any], base: str, good_id: str) -> Iterator[tuple[Rule, Hit]]:
    if old.get("priceBuzz") != new.get("priceBuzz"):
        was, now = old.get("priceBuzz"), new.get("priceBuzz")
        where = pointer_join(base, "priceBuzz") if "priceBuzz" in new else base
        yield R.GOOD_PRICE_CHANGED, Hit(
            where, f"price of good {_show(good_id)} changed from {_show(was)} to {_show(now)} Buzz: a new price "
                   "needs a new version and re-review", at="value" if "priceBuzz" in new else "open")
    for field in _CATALOGUE_FIELDS:
        if old.get(field) != new.get(field):
            change = "removed" if field not in new else ("added" if field not in old else "changed")
            where = pointer_join(base, field) if field in new else base
            yield R.CATALOGUE_CHANGED, Hit(
                where, f"good {_show(good_id)}: {field} {change}: catalogue changes need a new version and re-review",
                at="value" if field in new else "open")
