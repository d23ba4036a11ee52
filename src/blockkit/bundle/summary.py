"""The platform's file summary and manifest diff of a submission (its fileSummary and
manifestDiffSummary), computed as ``submitVersion`` computes them (civitai/civitai@ebed661
src/server/services/blocks/publish-request.service.ts: computeFileDiff, computeManifestDiff).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Optional, Sequence

from blockkit.jsstr import _js_string, js_stringify, utf16_len

if TYPE_CHECKING:
    from blockkit.bundle.check import FileMeta

# A changed field whose stable JSON is longer than this (in UTF-16 units) is summarised.
FIELD_VALUE_INLINE_MAX = 2048
SUMMARY_PREVIEW_CHARS = 200


def _js_key(text: str) -> bytes:
    """Array.prototype.sort's order for strings: by UTF-16 code units."""
    return text.encode("utf-16-be", "surrogatepass")


def stable_stringify(value: Any) -> str:
    """JSON.stringify with every object's keys sorted (the platform's stableJsonStringify)."""
    if isinstance(value, list):
        return "[" + ",".join(stable_stringify(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted((str(k) for k in value), key=_js_key)
        return "{" + ",".join(f"{_js_string(k)}:{stable_stringify(value[k])}" for k in keys) + "}"
    return js_stringify(value)


def stable_hash(value: Any) -> str:
    return hashlib.sha256(stable_stringify(value).encode("utf-8", "surrogatepass")).hexdigest()


def _summarised(value: Any) -> Any:
    text = stable_stringify(value)
    if utf16_len(text) <= FIELD_VALUE_INLINE_MAX:
        return value
    return {"__summarised": True, "sha256": stable_hash(value), "sizeBytes": utf16_len(text),
            "preview": text[:SUMMARY_PREVIEW_CHARS]}


def file_summary(current: Sequence["FileMeta"], previous: Optional[Sequence["FileMeta"]]) -> dict[str, Any]:
    """``{files, added, removed, changed}``: paths compared by sha256 with the previous version's."""
    files = [meta.to_json() for meta in current]
    if previous is None:
        return {"files": files, "added": [meta.path for meta in current], "removed": [], "changed": []}
    before = {meta.path: meta for meta in previous}
    now = {meta.path: meta for meta in current}
    added = [path for path in now if path not in before]
    changed = [path for path, meta in now.items() if path in before and before[path].sha256 != meta.sha256]
    removed = [path for path in before if path not in now]
    return {"files": files, "added": sorted(added, key=_js_key), "removed": sorted(removed, key=_js_key),
            "changed": sorted(changed, key=_js_key)}


def manifest_diff(current: dict[str, Any], previous: Optional[dict[str, Any]]) -> dict[str, Any]:
    """Top-level fields added, removed and changed (compared by stable hash), or the fields of a first version."""
    if previous is None:
        return {"kind": "first-version", "fields": sorted(current, key=_js_key)}
    added = [key for key in current if key not in previous]
    removed = [key for key in previous if key not in current]
    changed = [{"field": key, "from": _summarised(previous[key]), "to": _summarised(current[key])}
               for key in current if key in previous and stable_hash(current[key]) != stable_hash(previous[key])]
    changed.sort(key=lambda item: _js_key(item["field"]))
    return {"kind": "update", "added": sorted(added, key=_js_key), "removed": sorted(removed, key=_js_key),
            "changed": changed}
