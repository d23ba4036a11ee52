"""What validate and lint share: path expansion, context flags, config discovery, output.

Nothing here imports click: ``blockkit validate`` runs without it (commands/_options.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING, Any, Callable, Iterator, NoReturn, Optional

from blockkit.context import ContextFlags  # noqa: F401 (the commands' name for it)
from blockkit.platform import MANIFEST_FILENAME

if TYPE_CHECKING:
    from blockkit.context import Config

_SKIP_DIRS = frozenset({"node_modules", ".git", ".hg", ".svn", "dist", "build", ".venv", "venv", "__pycache__"})


class UsageProblem(Exception):
    """Something that makes the tool unable to do its job: exit status 2."""


# The path argument that means "read the manifest from standard input".
STDIN = "-"
STDIN_PATH = Path(STDIN)


def expand_paths(paths: tuple[str, ...]) -> Iterator[tuple[Path, Optional[str]]]:
    """Yield (manifest path, problem). A directory means its block.manifest.json, or every one below it.

    ``-`` is yielded as STDIN_PATH: standard input, once.
    """
    seen_stdin = False
    for raw in paths or (MANIFEST_FILENAME,):
        path = Path(raw)
        if raw == STDIN:
            if seen_stdin:
                yield path, "-: standard input can be read only once"
            else:
                seen_stdin = True
                yield STDIN_PATH, None
        elif (kind := _kind(path)) == "dir":
            direct = path / MANIFEST_FILENAME
            if direct.is_file():
                yield direct, None
                continue
            found = sorted(_walk(path))
            if not found:
                yield path, f"{raw}: no {MANIFEST_FILENAME} in this directory or below it"
            for manifest in found:
                yield manifest, None
        elif kind is None:
            yield path, f"{raw}: no such file or directory"
        else:
            yield path, None


def _kind(path: Path) -> Optional[str]:
    """"dir", "other", or None for no such path: what ``path.is_dir()`` then ``path.exists()`` say,
    with one stat (a call over a thousand files spent ~25 ms in pathlib's two)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        # Rare: pathlib's own answer, with whatever this Python's pathlib makes of the error.
        if path.is_dir():
            return "dir"
        return "other" if path.exists() else None
    return "dir" if S_ISDIR(mode) else "other"


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        if MANIFEST_FILENAME in files:
            yield Path(folder) / MANIFEST_FILENAME


def context_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--tier, --allowed-origin, --granted-scope, --app-domain, --stage and --config (click)."""
    from blockkit.commands._options import CONTEXT_OPTIONS, click_options

    return click_options(CONTEXT_OPTIONS)(func)


def report_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--format, --strict and --output: how a command that produces a Report delivers it (click)."""
    from blockkit.commands._options import REPORT_OPTIONS, click_options

    return click_options(REPORT_OPTIONS)(func)


def stdin_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--stdin-filename: what a manifest read from ``-`` is called, and where its settings are found."""
    from blockkit.commands._options import STDIN_OPTIONS, click_options

    return click_options(STDIN_OPTIONS)(func)


# One CSI escape sequence (ECMA-48: parameter bytes, intermediate bytes, a final byte): what
# click.echo removes from text bound for something other than a terminal.
_CSI = r"\033\[[0-?]*[ -/]*[@-~]"
_csi_pattern: Any = None


def _plain_stream(stream: Any) -> bool:
    """Whether click.echo would write to ``stream`` as it is: a real text stream with a known
    encoding that is not ASCII (click re-wraps those in UTF-8), and no Windows console."""
    import io

    if sys.platform.startswith("win") or type(stream) is not io.TextIOWrapper:
        return False
    encoding, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
    if encoding is None or errors is None:
        return False
    import codecs

    try:
        return codecs.lookup(encoding).name != "ascii"
    except LookupError:
        return True


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Write ``text`` as ``click.echo(text, err=err, nl=nl)`` does, without importing click where
    the result is plain. Once click is loaded (its command line, a test's runner), click writes."""
    if "click" not in sys.modules:
        stream = sys.stderr if err else sys.stdout
        if stream is None:
            return
        if _plain_stream(stream):
            if nl:
                text += "\n"
            if "\033" in text:
                try:
                    terminal = stream.isatty()
                except Exception:
                    terminal = False
                if not terminal:
                    global _csi_pattern
                    if _csi_pattern is None:
                        import re

                        _csi_pattern = re.compile(_CSI)
                    text = _csi_pattern.sub("", text)
            if text:
                stream.write(text)
            stream.flush()
            return
    import click

    click.echo(text, err=err, nl=nl)


def error_line(message: str) -> str:
    """``blockkit: error: message`` for standard error, with control characters escaped: a path
    holding a line feed must not start a line of its own (CI runners read stderr for commands too)."""
    from blockkit.render.terminal import visible

    return f"blockkit: error: {visible(message)}"


def fail(message: str) -> NoReturn:
    echo(error_line(message), err=True)
    sys.exit(2)


def use_color(output_is_file: bool) -> bool:
    if output_is_file or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def emit(text: str, output: Optional[Path]) -> None:
    # A "\ud800" escape in a manifest reaches messages as a lone surrogate, which UTF-8 cannot encode.
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if output is None:
        echo(text, nl=False)
        return
    from blockkit.fix.atomic import write_file

    try:
        # A fresh, exclusively created temporary name: a planted "FILE.tmp" link is never followed.
        write_file(output, text.encode("utf-8"))
    except OSError as exc:
        fail(f"{output}: cannot write output: {exc.strerror or exc}")
