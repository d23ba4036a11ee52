"""The whole of ``blockkit new`` as one call: answers in, files and a verdict out.

Checking code here never prints; the command does (prompts aside).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blockkit.context import CONFIG_FILENAME
from blockkit.platform import MANIFEST_FILENAME
from blockkit.report import Finding
from blockkit.scaffold import config, questions, selfcheck
from blockkit.scaffold.manifest import build_manifest
from blockkit.scaffold.options import AnswerError, Answers
from blockkit.scaffold.render import render, template_context
from blockkit.scaffold.writer import TargetError, WriteResult, check_target, commit, plan


class ScaffoldError(Exception):
    """Bad input or an unusable target: nothing was written."""


@dataclass
class Outcome:
    directory: Path
    answers: Answers
    files: WriteResult
    findings: list[Finding]
    # Whether an earlier `blockkit new` had written here (its blockkit.toml was read).
    rerun: bool = False
    # The git work tree the block sits in, when that is not the block's own folder.
    git_root: Path | None = None

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)


def gather(
    directory: Path, flags: dict[str, Any], *, prompter: questions.Prompter | None, use_defaults: bool, force: bool
) -> tuple[Answers, dict[str, Any]]:
    """Resolve the answers; returns them with the existing blockkit.toml (or {})."""
    try:
        check_target(directory, force)
        previous = config.read(directory) if directory.is_dir() else {}
    except (OSError, config.ConfigReadError, TargetError) as exc:
        raise ScaffoldError(str(exc)) from None
    # An earlier run's answers stand in for flags not given now, so
    # `blockkit new . --force` re-applies a newer template without asking again.
    given = {**config.saved_answers(previous), **flags}
    answers = questions.resolve(
        given,
        prompter=prompter,
        use_defaults=use_defaults,
        suggested_name=questions.name_from_directory(directory.resolve()),
    )
    return answers, previous


def create(directory: Path, answers: Answers, previous: dict[str, Any]) -> Outcome:
    manifest = build_manifest(answers)
    problems = [f for f in selfcheck.check_document(manifest) if f.severity == "error"]
    if problems:
        # An answer the platform would refuse (a repository link's path, say): write nothing.
        raise ScaffoldError("the platform would refuse this manifest:\n" + selfcheck.describe(problems))
    files = render(answers)
    config_path = directory / CONFIG_FILENAME
    try:
        result = plan(directory, files, config.recorded_hashes(previous))
        table = config.render(answers, previous, result.hashes, answers.template)
        existing = config_path.read_text(encoding="utf-8") if config_path.is_file() else None
        text = config.dumps(table, existing)
        # Everything, blockkit.toml included, lands together or not at all.
        commit(directory, {**result.pending, **({CONFIG_FILENAME: text.encode()} if text != existing else {})})
    except TargetError as exc:
        raise ScaffoldError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ScaffoldError(f"cannot write into {directory}: {reason} (nothing was written)") from None
    findings = selfcheck.check_written(directory / MANIFEST_FILENAME, answers.block_id)
    rerun = config.SCAFFOLD in previous
    return Outcome(directory, answers, result, findings, rerun=rerun, git_root=git_root(directory))


def git_root(directory: Path) -> Path | None:
    """The enclosing git work tree when it starts above ``directory``: pre-commit reads only its root."""
    target = directory.resolve()
    if (target / ".git").exists():
        return None
    for folder in target.parents:
        if (folder / ".git").exists():
            return folder
    return None


def next_steps(outcome: Outcome) -> list[str]:
    commands = template_context(outcome.answers)["commands"]
    target = outcome.directory.resolve()
    here = os.path.relpath(target, Path.cwd())
    # A path that climbs out of the current directory reads better absolute.
    shown = str(target) if here.startswith("..") else here
    steps = [] if shown == "." else [f"cd {shlex.quote(shown)}"]
    if commands["install"]:
        steps.append(commands["install"])
    if commands["dev"]:
        # Both the dev server and the host run until stopped: they cannot share a terminal.
        steps.append(f"{commands['dev']}  # keeps running; then, in a second terminal:")
    steps += [commands["host"], commands["lint"]]
    return steps


__all__ = ["AnswerError", "Outcome", "ScaffoldError", "create", "gather", "next_steps"]
