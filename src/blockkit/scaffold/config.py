"""blockkit.toml: the block's platform context, the answers it was made with,
and a hash of every file ``blockkit new`` wrote.

``[context]`` is what validate and lint check against (see blockkit.context);
``[scaffold]`` is this command's own record. Tables other commands own are kept
as they are when a later run rewrites the file.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from blockkit._version import __version__
from blockkit.context import CONFIG_FILENAME, Context
from blockkit.platform import DEFAULT_TIER, MODERATOR_ONLY_SLOTS
from blockkit.scaffold.catalog import DEV_PORT
from blockkit.scaffold.options import Answers


class ConfigReadError(Exception):
    """An existing blockkit.toml that cannot be read back."""


def digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def read(directory: Path) -> dict[str, Any]:
    path = directory / CONFIG_FILENAME
    if not path.is_file():
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigReadError(f"{path}: cannot read it back ({exc}); fix or remove it") from None


def recorded_hashes(table: dict[str, Any]) -> dict[str, str]:
    files = table.get("scaffold", {}).get("files", {})
    return {k: v for k, v in files.items() if isinstance(v, str)} if isinstance(files, dict) else {}


def saved_answers(table: dict[str, Any]) -> dict[str, Any]:
    """Answers of an earlier run, keyed like the questions (flags override them)."""
    saved = table.get("scaffold", {}).get("answers", {})
    if not isinstance(saved, dict):
        return {}
    answers = {k.replace("-", "_"): v for k, v in saved.items() if k != "justifications"}
    if isinstance(saved.get("justifications"), dict):
        answers["justifications"] = saved["justifications"]
    return answers


def _answers_table(answers: Answers) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key, value in asdict(answers).items():
        if value is None or value == () or value == {}:
            continue  # TOML has no null; absent means "not answered"
        table[key.replace("_", "-")] = list(value) if isinstance(value, tuple) else value
    return table


# The lint rule that advises on moderator-only model slots (codes are stable).
MODEL_SLOT_TARGET_RULE = "BK310"


def render(answers: Answers, previous: dict[str, Any], hashes: dict[str, str], template: str) -> dict[str, Any]:
    table = dict(previous)
    # The context is the developer's once written (they may change tier or
    # origins); a new file gets the platform's view of a new app.
    if not isinstance(table.get("context"), dict):
        table["context"] = {
            "tier": DEFAULT_TIER,
            "allowed-origins": list(Context().origins_for(answers.block_id)),
        }
    table.setdefault("dev", {"port": DEV_PORT})
    if answers.surface in MODERATOR_ONLY_SLOTS and "exceptions" not in table:
        # The developer chose a model slot knowingly (new says it is moderator-only at
        # launch), so the advice is recorded once, visibly, instead of on every lint run.
        # If the target moves, lint reports this entry as unused (BK390).
        table["exceptions"] = [{
            "pointer": "/targets/0/slotId",
            "codes": [MODEL_SLOT_TARGET_RULE],
            "reason": "model slots are open to moderators only at launch; chosen with blockkit new --surface",
        }]
    table["scaffold"] = {
        "blockkit-version": __version__,
        "template": template,
        "answers": _answers_table(answers),
        "files": dict(sorted(hashes.items())),
    }
    return table


def dumps(table: dict[str, Any]) -> bytes:
    import tomli_w

    return tomli_w.dumps(table).encode()
