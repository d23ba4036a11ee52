"""The ``blockkit`` command line.

Subcommands live in ``blockkit.commands.<name>`` and are imported only when they run,
so ``blockkit --version`` and ``blockkit --help`` never load the validation stack. A plain
``blockkit validate`` or ``blockkit lint`` run does not load click either: its arguments
go to a small parser that reads the same option table as the click command, and anything
that parser does not understand completely goes to click (commands/_options.py).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional, Sequence

from blockkit.commands._run import CANNOT_RUN, COMMANDS, DEBUG_VARIABLE, INTERRUPTED

__all__ = ["main", "COMMANDS", "INTERRUPTED", "CANNOT_RUN", "DEBUG_VARIABLE"]


def _group() -> Any:
    from blockkit.commands._group import main as group

    return group


class _Main:
    """``blockkit``: callable as the click group is (``main()``, ``main(args)``,
    ``main(prog_name=...)``, ``CliRunner().invoke(main, ...)``); anything else it is asked
    for comes from the click group, built on first use."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.main(*args, **kwargs)

    def main(self, args: Optional[Sequence[str]] = None, prog_name: Optional[str] = None,
             complete_var: Optional[str] = None, standalone_mode: bool = True, **extra: Any) -> Any:
        # Windows: click expands wildcards in sys.argv itself; it parses every run there.
        if standalone_mode and complete_var is None and not extra and not (args is None and os.name == "nt"):
            from blockkit.commands._run import exit_at_once, run_fast

            if args is None and _called_from_main():
                # The process's own command line (the ``blockkit`` script, ``python -m blockkit``):
                # nothing runs after the command, so it ends without the interpreter's teardown.
                try:
                    run_fast(sys.argv[1:])
                except SystemExit as exc:
                    exit_at_once(exc)
                    raise
            else:
                run_fast(sys.argv[1:] if args is None else list(args))
        try:
            return _group().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                 standalone_mode=standalone_mode, **extra)
        except SystemExit:
            if standalone_mode:
                from blockkit.commands._run import flush_output

                flush_output()  # a closed pipe found now ends quietly, not in the teardown
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(_group(), name)


main = _Main()


def _called_from_main() -> bool:
    """Whether ``main`` was called by our own entry points as the process's ``__main__``: the
    installed ``blockkit`` console script or ``python -m blockkit``. Other code that calls
    ``main()`` (a user's script, ``python -c``) may catch the SystemExit or count on atexit,
    so it keeps the usual exit."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals is globals():  # _Main.__call__, _Main.main
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None or frame.f_globals.get("__name__") != "__main__":
        return False
    spec = frame.f_globals.get("__spec__")
    if spec is not None:
        return bool(spec.name == "blockkit.__main__")
    return os.path.basename(frame.f_code.co_filename) == "blockkit"  # the console script pip writes


def __getattr__(name: str) -> Any:
    # The click classes, for code (and tests) that extend the group.
    if name in ("LazyGroup", "_Group", "_module_exists"):
        from blockkit.commands import _group as module

        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    main()
