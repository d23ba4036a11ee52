"""``blockkit fix``: apply safe (or, with --unsafe, all) autofixes; --diff previews them."""

from __future__ import annotations

import difflib
import os
import shlex
from functools import partial
from pathlib import Path
from typing import Iterator, Optional

import click

from blockkit.commands._common import STDIN_PATH, ContextFlags, context_options, expand_paths
from blockkit.platform import MANIFEST_FILENAME


def unified_diff(path: str, before: str, after: str) -> str:
    from blockkit.source import split_lines

    lines = difflib.unified_diff(split_lines(before, keepends=True), split_lines(after, keepends=True),
                                 fromfile=path, tofile=path)
    out = []
    for line in lines:
        out.append(line)
        if not line.endswith("\n"):
            # What diff(1) writes, so the preview applies cleanly with patch or git apply.
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _echo(text: str, err: bool = False) -> None:
    from blockkit.render.terminal import visible

    # Messages can quote a manifest's "\ud800" escape: a lone surrogate UTF-8 cannot encode.
    # Paths and messages can hold control characters (escaped: render.terminal).
    click.echo(visible(text).encode("utf-8", "backslashreplace").decode("utf-8"), err=err)


def _outside(shown: str, real: Path, root: Path) -> str:
    return (f"blockkit: error: {shown}: not fixed: a symbolic link leads it to {real}, outside {root}; "
            f"fix writes only inside the tree it is given (to fix that file, run: blockkit fix {shlex.quote(str(real))})")


def _trees(paths: tuple[str, ...]) -> Iterator[tuple[Path, Optional[str], Path]]:
    """(manifest, problem, tree) for each manifest: the tree is the directory argument it was
    found in, or the folder holding a file argument; fix writes nowhere outside it."""
    for raw in paths or (MANIFEST_FILENAME,):
        tree = Path(raw) if Path(raw).is_dir() else Path(raw).parent
        for manifest, problem in expand_paths((raw,)):
            yield manifest, problem, tree


def _write(path: Path, shown: str, text: str, original: str, tree: Path) -> bool:
    """Replace the file with ``text``; on failure say why in one line and return False."""
    from blockkit.fix.atomic import FileChanged, OutsideTree, replace_file

    try:
        replace_file(path, text.encode("utf-8"), original.encode("utf-8"), root=tree)
    except FileChanged as exc:
        _echo(f"blockkit: error: {shown}: not fixed: {exc}", err=True)
        return False
    except OutsideTree as exc:
        _echo(_outside(shown, exc.real, exc.root), err=True)
        return False
    except OSError as exc:
        _echo(f"blockkit: error: {shown}: cannot write: {exc.strerror or exc}", err=True)
        return False
    return True


def run_fix(paths: tuple[str, ...], flags: ContextFlags, *, unsafe: bool, preview: bool) -> int:
    from blockkit.context import ConfigError
    from blockkit.engine import UnreadableFile, read_path
    from blockkit.fix import fix_source, load_fixers
    from blockkit.fix.atomic import OutsideTree, real_inside
    from blockkit.lint.policy import LintPolicy
    from blockkit.render.text import render_file

    fixers = load_fixers()
    # lint's settings (select, ignore, exceptions, severities) decide which findings exist to be fixed.
    policy = LintPolicy()
    # The preview goes to stdout alone so that it can be piped to patch; the account goes to stderr.
    say = partial(_echo, err=preview)
    failed = False
    errors = warnings = fixed_total = held_back = 0
    files = 0
    for manifest, problem, tree in _trees(paths):
        if manifest == STDIN_PATH and not problem:
            problem = "-: blockkit fix edits files in place, so it cannot fix standard input"
        if problem:
            _echo(f"blockkit: error: {problem}", err=True)
            failed = True
            continue
        # A manifest that is (or lies behind) a symbolic link leading out of the tree is
        # refused before anything is read: fix would edit a file the user did not point at.
        try:
            real = real_inside(manifest, tree)
        except OutsideTree as exc:
            _echo(_outside(str(manifest), exc.real, exc.root), err=True)
            failed = True
            continue
        inner = os.path.relpath(real, os.path.realpath(tree))
        # A link inside the tree is followed, and said so: the file changed is its target.
        linked = Path(tree, inner) if Path(inner) != Path(os.path.relpath(manifest, tree)) else None
        try:
            config = flags.config_for(manifest)
            policy.prepare(manifest, config)
            source = read_path(manifest)
        except (UnreadableFile, ConfigError) as exc:
            _echo(f"blockkit: error: {exc}", err=True)
            failed = True
            continue
        files += 1
        project_dir = manifest.parent if manifest.name == MANIFEST_FILENAME else None
        outcome = fix_source(source, config.context, unsafe=unsafe, project_dir=project_dir,
                             review=partial(policy.review, manifest, config))
        if outcome.refused:
            say(f"{source.path}: not fixed: {outcome.refused}")
        for problem in outcome.problems:
            _echo(f"blockkit: error: {source.path}: {problem} (a bug in blockkit; please report it)", err=True)
            failed = True
        fixed = outcome.fixed
        # --diff writes nothing: what remains is placed in the file on disk, as "would fix" is.
        remaining = outcome.remaining_on_disk() if preview else outcome.report
        if outcome.changed and outcome.text is not None and outcome.original is not None:
            written = True
            if preview:
                click.echo(unified_diff(source.path, outcome.original, outcome.text), nl=False)
            else:
                written = _write(manifest, source.path, outcome.text, outcome.original, tree)
            if written:
                if linked is not None:
                    say(f"{source.path}: a symbolic link: {'would fix' if preview else 'fixed'} its target, {linked}")
                verb = "would fix" if preview else "fixed"
                say(f"{source.path}: {verb} {len(fixed)} finding{'s' if len(fixed) != 1 else ''}:")
                for finding in fixed:
                    say(f"  {finding.line}:{finding.column} {finding.code} {finding.message}")
                fixed_total += len(fixed)
            else:
                # Nothing was written, so every finding of the file as it is remains.
                failed = True
                remaining = outcome.before
        if remaining is not None:
            for line in render_file(remaining, show_snippets=not preview):
                say(line)
            errors += remaining.errors
            warnings += remaining.warnings
            held_back += sum(1 for f in remaining.findings
                             if f.code in fixers and fixers[f.code].safety == "unsafe" and not unsafe)
    if files:
        verb = "Would fix" if preview else "Fixed"
        summary = (f"{verb} {fixed_total} finding{'s' if fixed_total != 1 else ''} in {files} "
                   f"file{'s' if files != 1 else ''}; {errors} error{'s' if errors != 1 else ''} and "
                   f"{warnings} warning{'s' if warnings != 1 else ''} remain.")
        if held_back:
            summary += f" {held_back} more can be fixed with --unsafe."
        say(summary)
    if failed:
        return 2
    return 1 if errors else 0


@click.command("fix")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--unsafe", is_flag=True, help="Also apply fixes whose result you should review.")
@click.option("--diff", "preview", is_flag=True, help="Print the changes as a unified diff; write nothing.")
@context_options
def command(paths: tuple[str, ...], unsafe: bool, preview: bool, **context: object) -> None:
    """Apply safe autofixes to manifests (with --unsafe, all of them).

    Fixes edit only the characters they must: key order, indentation and the
    final newline stay as they were. A file that cannot be parsed is never
    touched. Exit status: 0 when no errors remain, 1 when some do, 2 when the
    tool could not do its job.
    """
    flags = ContextFlags(**context)  # type: ignore[arg-type]
    raise SystemExit(run_fix(paths, flags, unsafe=unsafe, preview=preview))
