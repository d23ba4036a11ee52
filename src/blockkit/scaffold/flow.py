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
from blockkit.scaffold.writer import TargetError, WriteResult, check_target, write_files


class ScaffoldError(Exception):
    """Bad input or an unusable target: nothing was written."""


@dataclass
class Outcome:
    directory: Path
    answers: Answers
    files: WriteResult
    findings: list[Finding]

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
    try:
        result = write_files(directory, files, config.recorded_hashes(previous))
        table = config.render(answers, previous, result.hashes, answers.template)
        (directory / CONFIG_FILENAME).write_bytes(config.dumps(table))
    except OSError as exc:
        raise ScaffoldError(f"cannot write into {directory}: {exc.strerror or exc}") from None
    findings = selfcheck.check_written(directory / MANIFEST_FILENAME, answers.block_id)
    return Outcome(directory, answers, result, findings)


def next_steps(outcome: Outcome) -> list[str]:
    commands = template_context(outcome.answers)["commands"]
    target = outcome.directory.resolve()
    here = os.path.relpath(target, Path.cwd())
    # A path that climbs out of the current directory reads better absolute.
    shown = str(target) if here.startswith("..") else here
    steps = [] if shown == "." else [f"cd {shlex.quote(shown)}"]
    steps += [c for c in (commands["install"], commands["dev"], commands["host"], commands["lint"]) if c]
    return steps


__all__ = ["AnswerError", "Outcome", "ScaffoldError", "create", "gather", "next_steps"]
