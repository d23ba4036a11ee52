"""One running emulator: data directory, store, seed, clock, the three origins.

:class:`Emulator` is the in-process form (``with Emulator(options) as emu:``;
``blockkit dev`` and tests use it); :func:`run_foreground` is ``blockkit
emulator start``: it serves until SIGINT or SIGTERM, then stops cleanly (requests
finish, the WAL is checkpointed into the database file, a temporary data
directory is removed).
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, TextIO

import orjson

from blockkit.emulator import transfer
from blockkit.emulator.http import access
from blockkit.emulator.store.clock import Clock
from blockkit.emulator.errors import EmulatorError
from blockkit.emulator.options import EmulatorOptions
from blockkit.emulator.http.server import EmulatorServer, build_apps
from blockkit.emulator.state import Urls
from blockkit.emulator.store import Store

TEMP_PREFIX = "blockkit-emulator-"
# In a kept data directory while a server runs on it: the ready file's contents (URLs, pid, access
# key), 0600 in the 0700 directory, so `blockkit emulator log --data DIR` finds the server.
SERVER_FILE = "server.json"


class Emulator:
    """Start with ``start()`` (or ``with``); ``urls``, ``data_dir``, ``store`` and ``clock`` then hold."""

    def __init__(self, options: EmulatorOptions, *, note: Callable[[str], None] | None = None,
                 wrap_catalogue: Callable[[Any], Any] | None = None) -> None:
        self.options = options
        # blockkit dev wraps the catalogue origin (CORS for its block origin); None: as is.
        self._wrap_catalogue = wrap_catalogue
        self._note = note or (lambda text: None)
        self.server: EmulatorServer | None = None
        self.store: Store | None = None
        self.clock: Clock | None = None
        self.data_dir: Path | None = None
        self._temporary = options.data is None
        self._data_lock: Any = None
        self.journal: Any = None

    @property
    def urls(self) -> Urls:
        if self.server is None:
            raise EmulatorError("the emulator is not started")
        return self.server.urls

    def start(self) -> Emulator:
        from blockkit.emulator import seed
        from blockkit.emulator.services.orchestration.callbacks import Background
        from blockkit.emulator.store.checkpointer import Checkpointer

        from blockkit.emulator.journal import Journal, journal_size

        self.journal = Journal(journal_size(self.options.journal_size))
        # Sockets first: a busy port fails before any work, and port 0 knows its URLs.
        self.server = EmulatorServer(self.options)
        try:
            if self._temporary:
                self.data_dir = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
            else:
                assert self.options.data is not None
                self.data_dir = Path(self.options.data).resolve()
            self._open_data_dir(self.data_dir)
            assert self.store is not None
            with self.store.guard():  # a full disk while seeding: one line, not a traceback
                for line in seed.ensure_seeded(self.store, self.options.seed, self.options.scale):
                    self._note(line)
                self.clock = Clock(self.store, follow=True)  # an import or reset while it runs moves it
            apps = build_apps(self.store, self.clock, self.options, self.server.urls, note=self._note,
                          journal=self.journal, data_ops=transfer)
            if self._wrap_catalogue is not None:
                apps = (self._wrap_catalogue(apps[0]), *apps[1:])
            # Before serving: refund what a crash cut short; then the callback and expiry worker runs.
            self.background = Background(self.store, self.clock, note=self._note).start()
            # Checkpoints off the request path (store/checkpointer.py), for the connections the
            # request threads are about to make.
            self.checkpointer = Checkpointer(self.store).start()
            self.server.start(apps, journal=self.journal)
            if not self._temporary:
                write_ready_file(self.data_dir / SERVER_FILE, self.ready_info())
        except BaseException:
            try:
                self.stop()
            except Exception:  # noqa: BLE001 - the first error is the one to report (e.g. "the disk is full")
                pass
            raise
        return self

    def _open_data_dir(self, data_dir: Path) -> None:
        """Lock the data directory for this process, open its store and check it can serve (datadir.py)."""
        from blockkit.emulator import datadir

        if not self._temporary:
            try:
                data_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise EmulatorError(f"{data_dir}: cannot create the data directory: {exc.strerror or exc}") from None
            self._data_lock = datadir.acquire_data_lock(data_dir)
        # A fresh data directory gets a copy of the cached seeded database when there is one (seed/template.py).
        from blockkit.emulator.seed import template as seed_template

        private_dir(data_dir)
        installed = seed_template.install(data_dir, self.options.seed, self.options.scale)
        self.store = Store.open(data_dir, check=not installed)
        private_files(data_dir)
        datadir.check_data_dir(data_dir, self.store)

    def ready_info(self) -> dict[str, Any]:
        """What the ready file holds (with the access key and the sign-in link, when there is a key)."""
        info: dict[str, Any] = {**self.urls.as_dict(), "pid": os.getpid(), "data": str(self.data_dir),
                                "console_url": access.console_url(self.urls.base_url)}
        if self.options.access_key is not None:
            info["access_key"] = self.options.access_key
            info["sign_in_url"] = access.sign_in_url(self.urls.auth_url, self.options.access_key)
        return info

    def stop(self) -> None:
        """Stop serving, checkpoint and close the store, remove a temporary data directory. Idempotent."""
        if self.server is not None:
            self.server.stop()
        if not self._temporary and self.data_dir is not None and self._data_lock is not None:
            server_file = self.data_dir / SERVER_FILE
            info = _read_ready(server_file)
            if info is not None and info.get("pid") == os.getpid():
                server_file.unlink(missing_ok=True)
        if getattr(self, "background", None) is not None:
            self.background.stop()
            self.background = None
        if getattr(self, "checkpointer", None) is not None:
            self.checkpointer.stop()
            self.checkpointer = None
        if self.clock is not None:
            self.clock.close()
        store, self.store = self.store, None  # once: a second stop() must not meet a closed store
        try:
            if store is not None:
                try:
                    store.checkpoint()
                finally:
                    store.close()
        finally:
            if self._data_lock is not None:
                self._data_lock.release()
                self._data_lock = None
        if self._temporary and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def restore_from(self, snapshot: Any) -> None:
        """Make the live database a copy of ``snapshot`` (an open sqlite3 connection; None: keep the
        rows as they are) and start afresh above it: a new clock read from the restored offset, and
        new apps, so no in-memory state (rate-limit windows, caches) survives. Between requests only.
        """
        if self.store is None or self.server is None:
            raise EmulatorError("the emulator is not started")
        if snapshot is not None:
            import sqlite3

            target = sqlite3.connect(self.store.path, timeout=self.store.busy_timeout_ms / 1000)
            try:
                with self.store.guard():
                    snapshot.backup(target)
            finally:
                target.close()
        from blockkit.emulator.services.orchestration.callbacks import Background

        if getattr(self, "background", None) is not None:
            self.background.stop()
        if self.clock is not None:
            self.clock.close()
        self.clock = Clock(self.store, follow=True)
        apps = build_apps(self.store, self.clock, self.options, self.server.urls, note=self._note,
                          journal=self.journal, data_ops=transfer)
        if self._wrap_catalogue is not None:
            apps = (self._wrap_catalogue(apps[0]), *apps[1:])
        self.background = Background(self.store, self.clock, note=self._note).start()
        self.server.swap(apps)

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def private_dir(path: Path) -> None:
    """Create the data directory 0700, or make an existing one of ours 0700 (it holds sessions and tokens)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid == os.geteuid() and info.st_mode & 0o077:
        os.chmod(path, 0o700)


def private_files(path: Path) -> None:
    """The store's files 0600: the database, its WAL and shared memory, the signing key."""
    for name in ("emulator.sqlite3", "emulator.sqlite3-wal", "emulator.sqlite3-shm", "block-token-key.pem"):
        try:
            info = (path / name).lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o077:
            os.chmod(path / name, 0o600)


def write_ready_file(path: Path, info: dict[str, Any]) -> None:
    """Write the ready file atomically (a reader never sees half of it), mode 0600.

    The file holds the access key, so: a temporary file made with mkstemp in the target's
    directory (O_CREAT|O_EXCL, an unpredictable name: no planted link or file is written
    through), fchmod 0600, then os.replace. A directory that any user may write to and that
    is not ours (such as /tmp) is refused: another user could swap the file there.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        info_dir = folder.stat()
    except OSError as exc:
        raise EmulatorError(f"{path}: cannot write the ready file: {exc.strerror or exc}") from None
    if info_dir.st_mode & stat.S_IWOTH and info_dir.st_uid != os.geteuid():
        raise EmulatorError(f"{path}: refusing to write the ready file in {folder}: any user may write there and"
                            " the directory is not yours, so another user could replace the file; choose a"
                            " directory of your own")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise EmulatorError(f"{path}: cannot write the ready file: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(orjson.dumps(info, option=orjson.OPT_INDENT_2) + b"\n")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise EmulatorError(f"{path}: cannot write the ready file: {exc.strerror or exc}") from None


def wait_until_ready(path: Path, *, pid: int | None = None, timeout_s: float = 120.0,
                     poll_s: float = 0.1) -> dict[str, Any]:
    """``blockkit emulator wait``: the ready file's contents once ``emulator start --ready-file PATH``
    wrote it (all three origins answer), from a process that is still running.

    With ``pid`` (``$!`` after ``start ... &``), only a file written by that process (or one it
    started) counts, so a file left by another run does not pass, and an end of that process
    before it is ready is an EmulatorError at once (its own error is already on the terminal).
    Without ``pid``, a file whose writer is alive counts. After ``timeout_s``: EmulatorError.
    """
    import time

    path = Path(path)
    deadline = time.monotonic() + timeout_s
    while True:
        info = _read_ready(path)
        if info is not None:
            writer = info.get("pid")
            if isinstance(writer, int) and _alive(writer) and (pid is None or _descends_from(writer, pid)):
                return info
        if pid is not None and not _alive(pid):
            raise EmulatorError(f"the emulator (process {pid}) ended before it was ready; its own message"
                                " is above")
        if time.monotonic() >= deadline:
            raise EmulatorError(f"{path}: not written after {timeout_s:g} s (--timeout SECONDS waits longer)")
        time.sleep(poll_s)


def _read_ready(path: Path) -> dict[str, Any] | None:
    try:
        info = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return info if isinstance(info, dict) and "base_url" in info else None


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (an exited child its shell has not reaped yet counts as ended)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: there, so alive
    stat_file = Path(f"/proc/{pid}/stat")
    try:
        state = stat_file.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) is all there is
    return state not in ("Z", "X")


def _descends_from(pid: int, ancestor: int) -> bool:
    """Whether ``pid`` is ``ancestor`` or below it (a wrapper script's child), as far as /proc tells."""
    for _ in range(16):
        if pid == ancestor:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return False
        if pid <= 1:
            return False
    return False


def run_foreground(options: EmulatorOptions, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """``blockkit emulator start``: serve until SIGINT/SIGTERM, then stop cleanly. Returns the exit status."""
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    # Everything this process creates (data directory, database, media, blobs) is the user's alone.
    os.umask(0o077)
    emulator = Emulator(options, note=lambda text: print(f"blockkit emulator: {text}", file=err, flush=True))
    try:
        emulator.start()
        urls = emulator.urls
        print(f"base_url          {urls.base_url}   (catalogue: {urls.base_url}/api/v1)", file=out)
        print(f"auth_url          {urls.auth_url}   (OAuth)", file=out)
        print(f"orchestration_url {urls.orchestration_url}   (orchestration)", file=out, flush=True)
        if options.access_key is not None:
            print(f"sign in           {access.sign_in_url(urls.auth_url, options.access_key)}", file=out, flush=True)
        print(f"console           {access.console_url(urls.base_url, options.access_key)}", file=out, flush=True)
        if options.ready_file is not None:
            write_ready_file(options.ready_file, emulator.ready_info())
        print(f"blockkit emulator: data in {emulator.data_dir}"
              f"{' (temporary, removed at exit)' if options.data is None else ''}; Ctrl-C stops.",
              file=err, flush=True)
        while not stop.wait(0.25):
            if emulator.server is None or not emulator.server.running:
                raise EmulatorError("the server stopped unexpectedly")
        print("blockkit emulator: stopping", file=err, flush=True)
        return 0
    finally:
        # Ctrl-C again while stopping must not leave a half-closed store: ignore it now.
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        try:
            emulator.stop()
            if options.ready_file is not None:
                _remove_ready_file(options.ready_file)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _remove_ready_file(path: Path) -> None:
    """Remove the ready file if it is still ours (a stale one would point at dead ports)."""
    try:
        info = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return
    if isinstance(info, dict) and info.get("pid") == os.getpid():
        Path(path).unlink(missing_ok=True)
