"""``blockkit emulator exec -- COMMAND``: the local platform around one command.

Start the emulator, wait until its three origins accept connections, run COMMAND with
their URLs in its environment, stop the emulator, exit with COMMAND's status.

Nothing is left running:

- COMMAND runs in a process group of its own. When it ends, whatever it left behind
  in that group gets SIGTERM, then SIGKILL after a grace period.
- SIGINT, SIGTERM and SIGHUP sent to blockkit are passed on to COMMAND's group; blockkit
  waits for COMMAND, then stops the emulator.
- On a terminal, COMMAND's group is made the foreground group, so Ctrl-C (and a
  program that reads the terminal) reach COMMAND directly, as under a shell. blockkit
  takes the terminal back when COMMAND ends.
- On Linux COMMAND is also told to die with blockkit (``PR_SET_PDEATHSIG``), so even a
  ``kill -9`` of blockkit leaves no orphan behind.

The exit status is COMMAND's; a COMMAND killed by signal N gives 128 + N, as shells do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.options import EmulatorOptions

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
LEFTOVER_GRACE_S = 2.0
PR_SET_PDEATHSIG = 1


def _pdeathsig_setter() -> Callable[[], None] | None:
    """A function for the child (between fork and exec) that asks the kernel to SIGKILL it when blockkit dies.

    Resolved here, before any fork, so that the child only makes one system call.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    kill_signal = int(signal.SIGKILL)

    def setup() -> None:
        prctl(PR_SET_PDEATHSIG, kill_signal, 0, 0, 0)

    return setup


@dataclass(frozen=True)
class ExportTarget:
    """An ``--export-on-exit`` directory as checked before COMMAND ran.

    ``parent`` is the resolved folder it lives in (ours, or writable by nobody else);
    ``identity`` is the (st_dev, st_ino) of the earlier export there, or None when there was none.
    """

    path: Path
    parent: Path
    identity: tuple[int, int] | None


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def check_export_target(target: Path) -> ExportTarget:
    """Refuse, before anything starts, an export target that holds something other than an earlier
    export, is a symlink, or lies in a folder another account may change (security review 2, S09)."""
    from blockkit.emulator.transfer import MANIFEST

    target = Path(target)
    label = f"--export-on-exit {target}"
    try:
        parent = (target.parent if str(target.parent) else Path(".")).resolve()
        parent_info = parent.stat()
    except OSError as exc:
        raise EmulatorError(f"{label}: cannot use its folder: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(parent_info.st_mode):
        raise EmulatorError(f"{label}: {parent} is not a directory")
    if parent_info.st_uid != os.geteuid() and parent_info.st_mode & (stat.S_IWOTH | stat.S_IWGRP):
        raise EmulatorError(f"{label}: {parent} is not yours and other accounts may write there, so one could"
                            " swap the directory for a link while the command runs; choose a folder of your own")
    try:
        info = os.lstat(parent / target.name)
    except FileNotFoundError:
        return ExportTarget(parent / target.name, parent, None)
    except OSError as exc:
        raise EmulatorError(f"{label}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise EmulatorError(f"{label}: is a symbolic link; give the directory itself")
    here = parent / target.name
    if not stat.S_ISDIR(info.st_mode) or (any(here.iterdir()) and not (here / MANIFEST).is_file()):
        raise EmulatorError(f"{label}: exists and is not an earlier export; give a new or empty"
                            " directory (an earlier export there is replaced)")
    return ExportTarget(here, parent, _identity(info))


def export_replacing(store: Any, target: Path | ExportTarget) -> dict[str, Any]:
    """Export into ``target``, replacing the earlier export there only once the new one is complete.

    The export is written into a private (0700) folder made beside the target, then renamed into
    place. What is there at the end must be what was checked at the start: the same directory
    (device and inode) or, when there was none, nothing. Otherwise nothing is moved or deleted;
    the new export stays in its folder and the error names it. Only the directory checked at the
    start is ever deleted, after it was renamed aside and found to be still the same one.
    """
    from blockkit.emulator.transfer import export

    checked = target if isinstance(target, ExportTarget) else check_export_target(Path(target))
    final, parent = checked.path, checked.parent
    fresh = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=parent))
    keep_fresh = False
    try:
        manifest = export(store, fresh)
        try:
            now = os.lstat(final)
        except FileNotFoundError:
            now = None
        if (now is None) != (checked.identity is None) or (
                now is not None and (stat.S_ISLNK(now.st_mode) or _identity(now) != checked.identity)):
            keep_fresh = True
            raise EmulatorError(f"--export-on-exit {final}: changed while the command ran (replaced, linked or"
                                f" made by something else), so it was left alone; the export is in {fresh}")
        if now is None:
            os.rename(fresh, final)
            return manifest
        old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old.", dir=parent))
        aside = old / "export"
        os.rename(final, aside)
        if _identity(os.lstat(aside)) != checked.identity:  # swapped between the check and the rename
            os.rename(aside, final)
            old.rmdir()
            keep_fresh = True
            raise EmulatorError(f"--export-on-exit {final}: changed while the command ran, so it was left alone;"
                                f" the export is in {fresh}")
        os.rename(fresh, final)
        shutil.rmtree(old, ignore_errors=True)
        return manifest
    finally:
        if not keep_fresh and fresh.exists():
            shutil.rmtree(fresh, ignore_errors=True)


class _Terminal:
    """Hands the controlling terminal's foreground to COMMAND's group and takes it back."""

    def __init__(self) -> None:
        self.fd: int | None = None
        try:
            if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
                self.fd = 0
        except OSError:
            self.fd = None

    def give(self, pgid: int) -> None:
        if self.fd is None:
            return
        try:
            os.tcsetpgrp(self.fd, pgid)
            os.killpg(pgid, signal.SIGCONT)  # in case it read the terminal before it was its own
        except OSError:
            pass

    def take_back(self) -> None:
        if self.fd is None:
            return
        previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # a background group may not otherwise
        try:
            os.tcsetpgrp(self.fd, os.getpgrp())
        except OSError:
            pass
        finally:
            signal.signal(signal.SIGTTOU, previous)


def run_command(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` in its own process group, pass signals on, clean up its group; return its status."""
    setup = _pdeathsig_setter()

    def child_setup() -> None:
        os.setpgid(0, 0)
        if setup is not None:
            setup()

    terminal = _Terminal()
    received: list[int] = []

    def forward(signum: int, frame: Any) -> None:
        try:
            os.killpg(child.pid, signum)
        except (ProcessLookupError, PermissionError, NameError):
            pass

    previous = {sig: signal.getsignal(sig) for sig in FORWARDED}
    try:
        # Install the forwarding first: a signal between the spawn and here would otherwise kill
        # blockkit alone, with COMMAND still running.
        for sig in FORWARDED:
            signal.signal(sig, lambda signum, frame: received.append(signum))
        try:
            child = subprocess.Popen(command, env=env, preexec_fn=child_setup)  # noqa: PLW1509 - see module doc
        except FileNotFoundError:
            raise EmulatorError(f"{command[0]}: command not found") from None
        except PermissionError:
            raise EmulatorError(f"{command[0]}: permission denied") from None
        except OSError as exc:
            raise EmulatorError(f"{command[0]}: cannot run it: {exc.strerror or exc}") from None
        try:
            os.setpgid(child.pid, child.pid)  # also from this side, so the group exists before we use it
        except OSError:
            pass
        for sig in FORWARDED:
            signal.signal(sig, forward)
        for signum in list(received):  # what arrived while COMMAND was being started
            forward(signum, None)
        terminal.give(child.pid)
        try:
            while True:
                try:
                    status = child.wait()
                    break
                except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for clarity
                    continue
        finally:
            terminal.take_back()
            _end_group(child.pid)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 - status if status < 0 else status


def _end_group(pgid: int) -> None:
    """SIGTERM what COMMAND left in its group, then SIGKILL what is still there after a grace period."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.02)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_exec(options: EmulatorOptions, command: list[str], *, export_on_exit: Path | None = None,
             import_from: Path | None = None, user: str | None = None, err: TextIO = sys.stderr) -> int:
    """``blockkit emulator exec``: returns COMMAND's exit status (EmulatorError: the emulator could not run)."""
    from blockkit.emulator.runtime import Emulator, _remove_ready_file, write_ready_file
    from blockkit.emulator.testing import LocalPlatform, environment
    from blockkit.submission import ENV_API_KEY

    if not command:
        raise EmulatorError("give the command to run after --, e.g. 'blockkit emulator exec -- pytest'")
    export_target = check_export_target(export_on_exit) if export_on_exit is not None else None
    if shutil.which(command[0]) is None and os.sep not in command[0]:
        raise EmulatorError(f"{command[0]}: command not found")

    def note(text: str) -> None:
        print(f"blockkit emulator: {text}", file=err, flush=True)

    emulator = Emulator(options, note=note)
    emulator.start()
    try:
        platform = LocalPlatform.__new__(LocalPlatform)  # the helpers, without a snapshot it will not use
        platform._emulator = emulator
        if import_from is not None:
            from blockkit.emulator.transfer import import_export

            assert emulator.store is not None
            import_export(emulator.store, import_from, replace=True)
            emulator.restore_from(None)
        token = platform.oauth_token(user, scope=_full_scope()) if user is not None else None
        env = {**os.environ, **environment(emulator.urls, access_token=token, access_key=options.access_key)}
        if user is not None:  # a personal API key too, for 'blockkit submit' and the platform's CLI routes
            env[ENV_API_KEY] = platform.api_key(user)
        if options.ready_file is not None:
            write_ready_file(options.ready_file, emulator.ready_info())
        status = run_command(command, env)
        if export_target is not None:
            assert emulator.store is not None
            manifest = export_replacing(emulator.store, export_target)
            rows = sum(entry["rows"] for entry in manifest["tables"].values())
            note(f"exported {rows} rows to {export_on_exit}")
        return status
    finally:
        emulator.stop()
        if options.ready_file is not None:
            _remove_ready_file(options.ready_file)


def _full_scope() -> int:
    from blockkit.emulator.services.oauth import scopes

    return scopes.FULL
