"""blockkit.toml: the block's platform context, the answers it was made with,
and a hash of every file ``blockkit new`` wrote.

``[context]`` is what validate and lint check against (see blockkit.context);
``[scaffold]`` is this command's own record. Tables other commands own are kept
as they are when a later run rewrites the file.
"""

from __future__ import annotations

import hashlib
import re
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


# TOML puts a key written below a [table] header into that table, so settings
# appended at the end of the file would land in [scaffold.files] and do nothing.
HEADER = """\
# blockkit settings for this block. Put lint settings (select, ignore, severity, ...)
# here, above [context]: a key written below a [table] header belongs to that table.

"""
SCAFFOLD_NOTE = "# Written by `blockkit new`: [scaffold] and its tables are rewritten by `blockkit new . --force`.\n"
SCAFFOLD = "scaffold"
# Where our part of the file starts: our note, else the [scaffold] header itself.
_SCAFFOLD_START = re.compile(r"^(?:# Written by `blockkit new`.*\n)?[ \t]*\[[ \t]*scaffold[ \t]*[\].]", re.MULTILINE)


def _loads(text: str) -> dict[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _is_table(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(isinstance(v, dict) for v in value)
    return isinstance(value, dict)


def _splice(table: dict[str, Any], existing: str) -> str | None:
    """``existing`` with only our part replaced, keeping the developer's comments and layout.

    None when that cannot give exactly ``table`` (then the caller writes the file afresh).
    """
    import tomli_w

    start = _SCAFFOLD_START.search(existing)
    head = existing[: start.start()] if start else existing
    tail = existing[start.start() :] if start else ""
    head_table, tail_table = _loads(head), _loads(tail)
    if head_table is None or tail_table is None or set(tail_table) - {SCAFFOLD}:
        return None
    rest = {k: v for k, v in table.items() if k != SCAFFOLD}
    if any(rest.get(k) != v for k, v in head_table.items()) or SCAFFOLD in head_table:
        return None
    # Tables this run adds (the context of a blockkit.toml new did not write) go after the developer's.
    added = {k: v for k, v in rest.items() if k not in head_table}
    if not all(_is_table(v) for v in added.values()):
        return None
    text = head.rstrip("\n") + "\n\n" if head.strip() else ""
    if added:
        text += tomli_w.dumps(added) + "\n"
    text += SCAFFOLD_NOTE + tomli_w.dumps({SCAFFOLD: table[SCAFFOLD]})
    return text if _loads(text) == table else None


def dumps(table: dict[str, Any], existing: str | None = None) -> str:
    """The text of blockkit.toml; given the file's current text, changes only what it must."""
    import tomli_w

    if existing is not None:
        spliced = _splice(table, existing)
        if spliced is not None:
            return spliced
    rest = {k: v for k, v in table.items() if k != SCAFFOLD}
    text = HEADER + (tomli_w.dumps(rest) + "\n" if rest else "")
    return text + SCAFFOLD_NOTE + tomli_w.dumps({SCAFFOLD: table[SCAFFOLD]})
