"""Running a command: the table of commands, exit statuses for interrupts and our own bugs,
and the fast path that runs ``validate`` and ``lint`` without click.

The click group (commands/_group.py) and the fast path keep one behaviour: Ctrl-C is one
line ("blockkit: interrupted") and exit 130; an unexpected exception, a bug of ours, is one
line and exit 2, or its traceback with BLOCKKIT_DEBUG set.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, NoReturn, Optional, Sequence

# name -> (module, one-line help shown by --help without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("blockkit.commands.validate", "Check manifests against the schema and every platform rule."),
    "lint": ("blockkit.commands.lint", "Validate, then advise on mistakes that pass validation."),
    "fix": ("blockkit.commands.fix", "Apply safe (or, with --unsafe, all) autofixes."),
    "explain": ("blockkit.commands.explain", "Explain a rule: what, why, example, fix."),
    "rules": ("blockkit.commands.rules", "List every rule."),
    "diff": ("blockkit.commands.diff", "Compare two versions of a manifest as review would."),
    "package": ("blockkit.commands.package", "Build a block's source zip and judge it as the platform would."),
    "new": ("blockkit.commands.new", "Scaffold a new block."),
    "dev": ("blockkit.commands.dev", "Run a block in a local host that behaves like the platform."),
    "emulator": ("blockkit.commands.emulator", "Serve the platform's APIs (catalogue, OAuth, orchestration) locally."),
    "submit": ("blockkit.commands.submit", "Package a block and submit it for review."),
    "submissions": ("blockkit.commands.submissions", "List your submissions and their review state."),
    "withdraw": ("blockkit.commands.withdraw", "Withdraw a pending submission."),
    "lsp": ("blockkit.commands.lsp", "Serve the Language Server Protocol for editors (stdio)."),
}

# Commands whose module has OPTIONS (a commands._options table) and execute(**values): their
# plain runs skip click.
FAST_COMMANDS = frozenset({"validate", "lint"})

# Exit status of a run the user interrupted (128 + SIGINT), as shells report it: never 1,
# which means "errors found", and never 0.
INTERRUPTED = 130
# Exit status when blockkit could not do its job (see the README's exit statuses).
CANNOT_RUN = 2
# Set to see the traceback behind an internal error.
DEBUG_VARIABLE = "BLOCKKIT_DEBUG"
# Exit status when the reader of standard output went away (`blockkit emulator users | head`):
# 128 + SIGPIPE, what a shell reports for a program the closed pipe ended, and quiet.
CLOSED_OUTPUT = 141
# Set (to anything) to send every argument list to click: the tests that compare both paths use it.
CLICK_ONLY_VARIABLE = "_BLOCKKIT_CLICK_ONLY"


def internal_error_line(exc: BaseException) -> str:
    from blockkit.render.terminal import visible

    detail = visible(str(exc))
    return (f"blockkit: internal error: {type(exc).__name__}: {detail} (a bug in blockkit; please"
            f" report it, with the traceback that {DEBUG_VARIABLE}=1 shows)")


def closed_output(exc: BaseException) -> bool:
    """Whether ``exc`` says that standard output's reader is gone (EPIPE: a closed pipe)."""
    import errno

    return isinstance(exc, OSError) and exc.errno in (errno.EPIPE, errno.ESHUTDOWN)


def end_closed_output(exc: Optional[BaseException] = None) -> "NoReturn":
    """End the run quietly because nobody reads standard output any more: exit CLOSED_OUTPUT,
    with no message (the reader, ``head`` say, chose to stop), except that BLOCKKIT_DEBUG
    shows the traceback on standard error, as it does for every error. Standard output is
    pointed at /dev/null first, so that the interpreter's own flush at exit has nowhere to fail."""
    if exc is not None and os.environ.get(DEBUG_VARIABLE):
        import traceback

        try:
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno() if sys.stdout is not None else 1)
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    raise SystemExit(CLOSED_OUTPUT)


def flush_output() -> None:
    """Flush standard output before the exit, so a closed pipe is found here (and ends
    quietly, as anywhere else) rather than in the interpreter's teardown ("Exception ignored
    ... BrokenPipeError", exit 120)."""
    try:
        # A stdout the command closed itself (``blockkit lsp`` closes its transport on "exit")
        # holds nothing left to write.
        if sys.stdout is not None and not sys.stdout.closed:
            sys.stdout.flush()
    except Exception as exc:
        if closed_output(exc):
            end_closed_output(exc)
        raise


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while a Ctrl-C (KeyboardInterrupt) was being handled: cleanup
    code that fails halfway through an interrupted step (a descriptor closed twice, say)
    replaces the interrupt with its own error; the user still pressed Ctrl-C."""
    seen: set[int] = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__context__
    return False


def _completion_requested() -> bool:
    # click answers shell completion when _<PROG>_COMPLETE is set, whatever the arguments.
    return any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ)


# Whether run_fast turned the cyclic garbage collector off for the start-up (see resume_gc).
_gc_paused = False


def resume_gc() -> None:
    """Turn the garbage collector back on if run_fast turned it off: called once the start-up is
    over, before the files are checked, so that a long run still frees cyclic garbage."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        import gc

        gc.enable()


def run_fast(argv: Sequence[str]) -> None:
    """Run ``argv`` (without the program name) here when the fast parser understands it all:
    this raises SystemExit with the command's status. Returns when click must parse ``argv``."""
    if not argv or argv[0] not in FAST_COMMANDS or os.environ.get(CLICK_ONLY_VARIABLE) or _completion_requested():
        return
    if not all(type(arg) is str for arg in argv):  # a caller's Path or bytes: whatever click makes of it
        return
    # The start-up (importing the validation stack, loading rules, building validators) makes
    # tens of thousands of objects that live for the whole run and no garbage: the ~20 collections
    # it would trigger only walk them (~4 ms of a cold one-file run). Checking turns it back on.
    global _gc_paused
    import gc

    _gc_paused = gc.isenabled()
    gc.disable()
    try:
        _run_fast(argv)
    finally:
        resume_gc()


def _run_fast(argv: Sequence[str]) -> None:
    name = argv[0]
    execute: Optional[Callable[..., Any]] = None
    values: Optional[dict[str, Any]] = None
    # As in the click group, loading the command and reading its arguments are inside the guard.
    with _guard():
        import importlib

        from blockkit.commands._options import parse_fast

        module = importlib.import_module(COMMANDS[name][0])
        values = parse_fast(argv[1:], module.OPTIONS)
        execute = module.execute
    if values is None or execute is None:
        return
    with _guard():
        execute(**values)


def exit_at_once(exc: SystemExit) -> None:
    """End the process now with ``exc``'s status, as the interpreter would after flushing the
    standard streams, but without its teardown: freeing every module and object one by one
    took ~14 ms after a thousand-file run (whose reports are all still alive), and nothing of
    ours needs it (files are written and closed by then; no atexit handler is ours).

    Returns, leaving the usual exit to the caller, whenever that could behave differently:
    a status that is not a number, ``python -i``, or a stream that fails to flush. A closed
    standard output raises SystemExit(CLOSED_OUTPUT) instead, as a closed pipe does anywhere.
    """
    code = exc.code
    if code is None:
        code = 0
    if type(code) is not int or not 0 <= code <= 255 or sys.flags.inspect:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BaseException as error:
        if closed_output(error):  # the output's reader is gone: quiet, as everywhere
            end_closed_output(error)
        return
    os._exit(code)


class _guard:
    """What the click group does around a command: Ctrl-C and our own bugs, one line each."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, _traceback: Any) -> bool:
        if exc is None or not isinstance(exc, (KeyboardInterrupt, Exception)):
            return False  # SystemExit: the command's exit status
        from blockkit.commands._common import echo

        if isinstance(exc, KeyboardInterrupt) or caused_by_interrupt(exc):
            echo("\nblockkit: interrupted", err=True)
            raise SystemExit(INTERRUPTED) from None
        if closed_output(exc):
            end_closed_output(exc)
        if os.environ.get(DEBUG_VARIABLE):
            return False  # the traceback, as from click
        echo(internal_error_line(exc), err=True)
        raise SystemExit(CANNOT_RUN) from None
