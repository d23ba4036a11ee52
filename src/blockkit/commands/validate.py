"""``blockkit validate``: the platform's verdict on each manifest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from blockkit.commands import _options
from blockkit.commands._common import STDIN, STDIN_PATH, ContextFlags, echo, emit, error_line, expand_paths, use_color

if TYPE_CHECKING:
    from blockkit.context import Config, Context
    from blockkit.lint.policy import LintPolicy
    from blockkit.report import FileReport


# Below this many files a process pool costs more than it saves.
PARALLEL_MIN_FILES = 200
# How many files the parent checks before it forks (check_many).
PRIME_FILES = 16


# One manifest to check: its path, the context, the project folder lint may read (or None),
# and its bytes when they were read already (standard input).
Job = tuple[Path, "Context", Optional[Path], Optional[bytes]]


# Writes one file's part of the text report (render.text.file_block with the run's options).
BlockWriter = Callable[["FileReport"], str]
# What comes back for a file when its part of the text report was written where it was
# checked: that part, and its (errors, warnings, infos) for the summary line and exit status.
Written = tuple[str, int, int, int]


def _check_one(job: Job, layers: tuple[str, ...], keep_text: bool = True, snippets: bool = True,
               block: Optional[BlockWriter] = None) -> "FileReport | str | Written":
    """One manifest's report, or the one-line reason it could not be read.

    The report never keeps the parsed document, and keeps the text only where the text
    report may quote it in a snippet (``snippets``: a finding there) or ``keep_text`` asks
    for it (``lint --against`` reads it): what crosses back from a pool worker stays small.
    With ``block``, the file's part of the text report is written here, where the file was
    checked (in a worker, for a large batch), and only that part and the file's counts come
    back (``Written``): a thousand reports' findings cost more to pickle and unpickle than
    to write out.
    """
    from blockkit.engine import UnreadableFile, check, read_path
    from blockkit.source import read_bytes

    manifest, context, project_dir, raw = job
    try:
        source = read_path(manifest) if raw is None else read_bytes(raw, str(manifest))
    except UnreadableFile as exc:
        return str(exc)
    report = check(source, context, layers=layers, project_dir=project_dir)
    if block is not None:
        from blockkit.render.text import severity_counts

        return (block(report), *severity_counts(report))
    report.data = None
    if not (keep_text or (snippets and report.findings)):
        report.text = None
    return report


def check_many(jobs: list[Job], layers: tuple[str, ...], keep_text: bool = True, snippets: bool = True,
               block: Optional[BlockWriter] = None) -> list["FileReport | str | Written"]:
    """Check every job, in order; large batches are spread over the machine's cores."""
    import os
    from functools import partial

    workers = min(os.cpu_count() or 1, 8)
    work = partial(_check_one, layers=layers, keep_text=keep_text, snippets=snippets, block=block)
    if len(jobs) < PARALLEL_MIN_FILES or workers < 2:
        return [work(job) for job in jobs]
    from blockkit.engine import warm_up
    from blockkit.forkpool import fork_available, map_forked

    if not fork_available():  # pragma: no cover - platforms without fork
        return [work(job) for job in jobs]

    # Forked workers inherit the loaded rules and validators instead of rebuilding them.
    warm_up(layers)
    from blockkit.commands._run import resume_gc

    resume_gc()  # the start-up is over; a large batch frees its cyclic garbage as it goes
    # Chunks small enough that the processes finish close together (each takes the next
    # chunk when it is free), large enough that sending them costs little. This process
    # checks chunks too (workers - 1 forks).
    chunk = max(PRIME_FILES, min(256, len(jobs) // (workers * 16)))
    # The first files are checked here before forking: what findings load on first use (the
    # span locator, difflib, patterns compiled on first match) is then loaded once, not again
    # in every worker (~5-15 ms each).
    primed = [work(job) for job in jobs[:PRIME_FILES]]
    # Ctrl-C: the parent alone stops the run (exit 130, one line); map_forked kills the
    # workers first, whatever they are doing.
    return primed + map_forked(work, jobs[PRIME_FILES:], workers, chunk, parent_works=True)


def _read_stdin() -> bytes:
    import sys

    from blockkit.platform import LIMITS

    # One byte past the limit is enough to report the file as too large (BK006).
    return sys.stdin.buffer.read(LIMITS.file_bytes_max + 1)


def run_check(paths: tuple[str, ...], flags: ContextFlags, *, layers: tuple[str, ...], strict: bool,
              fmt: str, output: Optional[Path], project_aware: bool = False,
              policy: Optional["LintPolicy"] = None, stdin_filename: Optional[Path] = None) -> int:
    """Check every manifest under ``paths`` and render the report; returns the exit status.

    ``project_aware``: rules may read the project next to a manifest named
    block.manifest.json. ``policy``: lint settings and baseline (blockkit.lint.policy).
    ``-`` reads a manifest from standard input, reported as ``stdin_filename``
    (default ``<stdin>``) and configured as a file at that path would be.
    """
    from blockkit.context import ConfigError
    from blockkit.platform import MANIFEST_FILENAME
    from blockkit.render import render
    from blockkit.report import Report

    report = Report(strict=strict)
    problems: list[str] = []
    jobs: list[tuple[Path, "Config", Optional[Path], Optional[bytes]]] = []
    for manifest, problem in expand_paths(paths):
        if problem:
            problems.append(problem)
            continue
        raw = None
        if manifest is STDIN_PATH or str(manifest) == STDIN:  # as Path equality, at a string's cost
            raw = _read_stdin()
            manifest = stdin_filename or Path("<stdin>")
        try:
            config = flags.config_for(manifest)
            if policy is not None:
                policy.prepare(manifest, config)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        # A manifest under another name is a copy or a fixture, not the file of a block project.
        project_dir = manifest.parent if project_aware and manifest.name == MANIFEST_FILENAME else None
        jobs.append((manifest, config, project_dir, raw))
    color = use_color(output is not None)
    if fmt == "text" and policy is None:
        # validate's text report is written file by file where each file is checked (in the
        # workers, for a large batch); lint's policy may still drop findings, so its report,
        # and every other format, is written from the whole Report at the end.
        from functools import partial

        from blockkit.render.text import Tally, file_block, join_blocks

        outcomes = check_many(_check_jobs(jobs), layers, keep_text=False, block=partial(file_block, color=color))
        tally = Tally(strict)
        parts: list[str] = []
        for outcome in outcomes:
            if isinstance(outcome, str):
                problems.append(outcome)
                continue
            part, errors, warnings, infos = outcome  # type: ignore[misc]
            parts.append(part)
            tally.add(errors, warnings, infos)
        _report_problems(problems)
        if tally.files or not problems:
            emit(join_blocks(parts, tally.line()), output)
        return 2 if problems else (1 if tally.failing else 0)  # Report.exit_code: 1 when a file is not ok
    outcomes = check_many(_check_jobs(jobs), layers, keep_text=policy is not None, snippets=fmt == "text")
    for (manifest, config, _, _), outcome in zip(jobs, outcomes):
        if isinstance(outcome, str):
            problems.append(outcome)
            continue
        if policy is not None:
            policy.review(manifest, config, outcome)  # type: ignore[arg-type]
        report.files.append(outcome)  # type: ignore[arg-type]
    if policy is not None:
        try:
            policy.finish(report)
        except ConfigError as exc:
            problems.append(str(exc))
    _report_problems(problems)
    if report.files or not problems:
        emit(render(report, fmt, color=color), output)
    if problems:
        return 2
    return report.exit_code


def _check_jobs(jobs: list[tuple[Path, "Config", Optional[Path], Optional[bytes]]]) -> list[Job]:
    return [(manifest, config.context, project_dir, raw) for manifest, config, project_dir, raw in jobs]


def _report_problems(problems: list[str]) -> None:
    for problem in problems:
        echo(error_line(problem), err=True)


# The options, in --help order: the click command and the fast parser both read this table.
OPTIONS = _options.VALIDATE


def execute(paths: tuple[str, ...], fmt: str, strict: bool, output: Optional[Path], stdin_filename: Optional[Path],
            **context: object) -> None:
    """Check manifests against the schema and every platform rule.

    PATH is a block.manifest.json, or a directory holding one (searched
    recursively), or - for standard input. Default: ./block.manifest.json.
    Exit status: 0 no errors, 1 errors found, 2 the tool could not do its job.
    """
    flags = ContextFlags(**context)  # type: ignore[arg-type]
    raise SystemExit(run_check(paths, flags, layers=("parse", "schema", "server"), strict=strict,
                               fmt=fmt, output=output, stdin_filename=stdin_filename))


def __getattr__(name: str) -> object:
    # ``command``, the click command, is built on first use: the fast path never needs click.
    if name == "command":
        built = globals()["command"] = _options.click_command("validate", OPTIONS, execute)
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
