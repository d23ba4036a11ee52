"""Read ``block.manifest.json`` for the dev host, tolerantly.

``blockkit dev`` runs any manifest that parses: validation is ``blockkit
validate``'s job. Where a key the host needs is missing or has the wrong type,
the dev host uses the default below and says so in a note, so that a block can
be run while its manifest is still being written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blockkit.dev.errors import DevError
from blockkit.platform import IFRAME_DEFAULTS, MANIFEST_FILENAME

# For an iframe key the manifest leaves out, the dev host uses the platform
# table's defaults (the ones `blockkit new` and `blockkit fix` write), and
# says so in a note.
MANIFEST_NAME = MANIFEST_FILENAME
DEFAULT_RENDER_MODE = "iframe"
DEFAULT_AUTH = "block-token"
DEFAULT_BLOCK_ID = "dev-block"


@dataclass(frozen=True)
class IframeSpec:
    min_height: int
    max_height: int | None
    resizable: bool
    sandbox: str

    def clamp(self, height: float) -> float:
        clamped = max(float(self.min_height), height)
        return min(float(self.max_height), clamped) if self.max_height is not None else clamped


@dataclass(frozen=True)
class DevManifest:
    path: Path
    block_id: str
    name: str
    scopes: tuple[str, ...]
    iframe: IframeSpec
    page: dict[str, Any] | None
    target_slots: tuple[str, ...]
    build_command: str | None
    output_dir: str | None
    render_mode: str
    auth: str
    app_id: str | None
    # One line per default the dev host had to apply.
    notes: tuple[str, ...]
    # The goods catalogue (entries that are objects with a string id), as the manifest gives it.
    goods: tuple[dict[str, Any], ...] = ()
    # bootSkeleton: index.html paints its own loading state, so the page host shows the frame from mount.
    boot_skeleton: bool = False

    @property
    def block_dir(self) -> Path:
        return self.path.parent


def manifest_path(block_dir_or_file: Path) -> Path:
    return block_dir_or_file if block_dir_or_file.is_file() else block_dir_or_file / MANIFEST_NAME


def load_dev_manifest(block_dir_or_file: Path) -> DevManifest:
    """Read the manifest in ``block_dir_or_file``; raise :class:`DevError` if it cannot be read."""
    if not block_dir_or_file.exists():
        raise DevError(f"{block_dir_or_file}: no such directory")
    path = manifest_path(block_dir_or_file)
    if not path.exists():
        raise DevError(f"{path}: no manifest here (a block directory holds {MANIFEST_NAME})")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DevError(f"{path}: cannot read the manifest: {exc.strerror or exc}") from None
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DevError(f"{path}:{exc.lineno}:{exc.colno}: the manifest is not valid JSON: {exc.msg}") from None
    except UnicodeDecodeError:
        raise DevError(f"{path}: the manifest is not UTF-8 text") from None
    if not isinstance(document, dict):
        raise DevError(f"{path}: the manifest must be one JSON object, not {_json_kind(document)}")
    return _interpret(path, document)


def _interpret(path: Path, doc: dict[str, Any]) -> DevManifest:
    notes: list[str] = []
    block_id = _string(doc, "blockId", DEFAULT_BLOCK_ID, notes)
    raw_name = doc.get("name")
    name = raw_name if isinstance(raw_name, str) and raw_name else block_id
    scopes_value = doc.get("scopes", [])
    if not isinstance(scopes_value, list):
        notes.append("scopes is not a list; running with no scopes")
        scopes_value = []
    scopes = tuple(s for s in scopes_value if isinstance(s, str))
    page = doc.get("page") if isinstance(doc.get("page"), dict) else None
    if "page" in doc and page is None:
        notes.append("page is not an object; ignoring it")
    raw_targets = doc.get("targets")
    targets: list[Any] = raw_targets if isinstance(raw_targets, list) else []
    slots = tuple(
        t["slotId"] for t in targets if isinstance(t, dict) and isinstance(t.get("slotId"), str)
    )
    return DevManifest(
        path=path,
        block_id=block_id,
        name=name,
        scopes=scopes,
        iframe=_iframe(doc.get("iframe"), notes),
        page=page,
        target_slots=slots,
        build_command=doc.get("buildCommand") if isinstance(doc.get("buildCommand"), str) else None,
        output_dir=doc.get("outputDir") if isinstance(doc.get("outputDir"), str) else None,
        render_mode=_string(doc, "renderMode", DEFAULT_RENDER_MODE, notes, quiet_if_missing=True),
        auth=_string(doc, "auth", DEFAULT_AUTH, notes, quiet_if_missing=True),
        app_id=doc.get("appId") if isinstance(doc.get("appId"), str) else None,
        notes=tuple(notes),
        goods=tuple(g for g in (doc.get("goods") if isinstance(doc.get("goods"), list) else [])
                    if isinstance(g, dict) and isinstance(g.get("id"), str)),
        boot_skeleton=doc.get("bootSkeleton") is True,
    )


def _iframe(value: Any, notes: list[str]) -> IframeSpec:
    if not isinstance(value, dict):
        if value is not None:
            notes.append("iframe is not an object; using the dev defaults for all of it")
        value = {}
    got: dict[str, Any] = {}
    for key, default in IFRAME_DEFAULTS.items():
        candidate = value.get(key, _MISSING)
        if candidate is _MISSING:
            notes.append(f"iframe.{key} is missing; using {json.dumps(default)}")
            got[key] = default
        elif not _iframe_value_ok(key, candidate):
            notes.append(f"iframe.{key} is {json.dumps(candidate)}; using {json.dumps(default)}")
            got[key] = default
        else:
            got[key] = candidate
    if got["maxHeight"] is not None and got["maxHeight"] < got["minHeight"]:
        notes.append(
            f"iframe.maxHeight {got['maxHeight']} is below minHeight {got['minHeight']}; "
            "heights are clamped to minHeight"
        )
        got["maxHeight"] = got["minHeight"]
    return IframeSpec(
        min_height=got["minHeight"],
        max_height=got["maxHeight"],
        resizable=got["resizable"],
        sandbox=got["sandbox"],
    )


def _iframe_value_ok(key: str, value: Any) -> bool:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if key == "minHeight":
        return is_int and value > 0
    if key == "maxHeight":
        return value is None or (is_int and value > 0)
    if key == "resizable":
        return isinstance(value, bool)
    # The sandbox string is used exactly as written, however odd: showing what
    # the manifest really does is the point of the dev host.
    return isinstance(value, str)


def _string(
    doc: dict[str, Any], key: str, default: str, notes: list[str], *, quiet_if_missing: bool = False
) -> str:
    value = doc.get(key)
    if isinstance(value, str) and value:
        return value
    if value is not None or not quiet_if_missing:
        notes.append(f"{key} is {'missing' if value is None else json.dumps(value)}; using {default!r}")
    return default


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    return "a number"


class _Missing:
    pass


_MISSING = _Missing()
