"""A viewer's checkpoint choice for a block (SET_USER_CHECKPOINT, and its REST twin user-checkpoint/set).

The platform keeps a per-viewer checkpoint override for a block install (``block_user_settings``, keyed by
instance and viewer). Here it is kept per (block, viewer), like app storage, because ``blockkit dev`` makes
a new instance id on every page load; the choices live in ``<data>/dev-user-checkpoints.json``:
``{"<blockId>:<userId>": {"modelVersionId", "setAt"}}``. ``None`` clears the choice.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blockkit.emulator.store.clock import Clock

CHECKPOINTS_FILE = "dev-user-checkpoints.json"
_LOCK = threading.Lock()


def set_checkpoint(data_dir: Path, clock: Clock, block_id: str, user_id: int, version: int | None) -> None:
    """Record (or, with ``version`` None, clear) the viewer's checkpoint for the block."""
    path = data_dir / CHECKPOINTS_FILE
    with _LOCK:
        try:
            saved: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved = {}
        if not isinstance(saved, dict):
            saved = {}
        key = f"{block_id}:{user_id}"
        if version is None:
            saved.pop(key, None)
        else:
            saved[key] = {"modelVersionId": version, "setAt": clock.iso()}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(saved, indent=1), encoding="utf-8")
        tmp.replace(path)


def checkpoint(data_dir: Path, block_id: str, user_id: int) -> int | None:
    """The viewer's recorded checkpoint (model version id) for the block, or None."""
    try:
        saved = json.loads((data_dir / CHECKPOINTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = saved.get(f"{block_id}:{user_id}") if isinstance(saved, dict) else None
    version = entry.get("modelVersionId") if isinstance(entry, dict) else None
    return version if isinstance(version, int) and not isinstance(version, bool) else None
