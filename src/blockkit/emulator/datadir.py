"""The data directory at start: one serving process per directory, and the checks a store passes first.

- ``acquire_data_lock(data_dir) -> DataLock``: an exclusive ``flock`` on the data directory itself,
  and one on ``<data>/emulator.lock`` (which holds the pid, and is what older blockkits lock), held
  for the life of the serving process (``blockkit emulator start`` and ``blockkit dev``). The
  kernel drops them when the process ends, however it ends (kill -9 included), so there is never
  a stale lock to clear. The directory is the lock that counts: a file can be removed under its
  holder (``rm emulator.lock``) and a new one made and locked beside it, while the directory
  cannot be replaced without taking the store with it. A second server on the same directory
  gets one line naming the holder's pid and exits 2. The CLI's other commands (token, export,
  import, reset, ...) take no lock: they are documented to work while the emulator runs.
- ``check_data_dir(data_dir, store)``: what would otherwise fail only later, at a request: a
  database file that opens read-only (a 0444 file in a writable directory), and a block-token
  signing key that is empty or not a PEM RSA private key. Each is one line; the files are left
  as they are.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from blockkit.emulator.errors import EmulatorError, StoreError

if TYPE_CHECKING:
    from blockkit.emulator.store import Store

LOCK_FILENAME = "emulator.lock"


def _lock_now(fd: int) -> None:
    """Take an exclusive lock on ``fd`` without waiting (BlockingIOError when another process holds it)."""
    try:
        import fcntl
    except ImportError:  # not POSIX (Windows): no lock is taken, as before
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


class DataDirInUse(EmulatorError):
    """Another process serves this data directory."""


class DataLock:
    """The held lock; ``release()`` (idempotent) lets the next server start."""

    def __init__(self, path: Path, fd: int, dir_fd: int | None = None) -> None:
        self.path = path
        self._fd: int | None = fd
        self._dir_fd = dir_fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        dir_fd, self._dir_fd = self._dir_fd, None
        if fd is not None:
            try:
                os.ftruncate(fd, 0)  # the pid is no longer a holder's
            except OSError:
                pass
            os.close(fd)  # closing the descriptor drops the flock
        if dir_fd is not None:
            os.close(dir_fd)  # the directory's lock last: it is the one that counts


def _holder(fd: int) -> str:
    # The holder writes its pid just after it locks; give it a moment if we look in between.
    for _ in range(20):
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text:
            return f"pid {text}"
        time.sleep(0.025)
    return "pid unknown"


def _holder_of_directory(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)  # never made here: a removed one stays removed
    except OSError:
        return f"pid unknown: its {LOCK_FILENAME} was removed"
    try:
        holder = _holder(fd)
    finally:
        os.close(fd)
    return holder if holder != "pid unknown" else f"pid unknown: its {LOCK_FILENAME} was emptied or replaced"


def _lock_directory(data_dir: Path) -> int | None:
    """The directory's own lock (None where directories cannot be opened to lock: not POSIX)."""
    try:
        dir_fd = os.open(data_dir, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise EmulatorError(f"{data_dir}: cannot open the data directory: {exc.strerror or exc}") from None
    try:
        _lock_now(dir_fd)
    except BlockingIOError:
        os.close(dir_fd)
        raise DataDirInUse(f"{data_dir}: in use by another blockkit emulator"
                           f" ({_holder_of_directory(Path(data_dir) / LOCK_FILENAME)}); stop it, or use another"
                           " --data directory") from None
    except OSError as exc:
        os.close(dir_fd)
        raise EmulatorError(f"{data_dir}: cannot lock the data directory: {exc.strerror or exc}") from None
    return dir_fd


def acquire_data_lock(data_dir: Path) -> DataLock:
    """Lock ``data_dir`` for this process or raise :class:`DataDirInUse` (one line, naming the holder)."""
    path = Path(data_dir) / LOCK_FILENAME
    dir_fd = _lock_directory(Path(data_dir))
    try:
        return _lock_file(data_dir, path, dir_fd)
    except BaseException:
        if dir_fd is not None:
            os.close(dir_fd)
        raise


def _lock_file(data_dir: Path, path: Path, dir_fd: int | None) -> DataLock:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise EmulatorError(f"{path}: cannot open the data directory's lock file: {exc.strerror or exc}") from None
    try:
        _lock_now(fd)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise DataDirInUse(f"{data_dir}: in use by another blockkit emulator ({holder}); stop it, or use another"
                           " --data directory") from None
    except OSError as exc:
        os.close(fd)
        raise EmulatorError(f"{path}: cannot lock the data directory: {exc.strerror or exc}") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        pass  # the lock holds without the pid; a second server then says "pid unknown"
    return DataLock(path, fd, dir_fd)


def check_data_dir(data_dir: Path, store: Store) -> None:
    """Refuse, in one line, a store that cannot take writes or a signing key that cannot sign."""
    store.check_writable()
    _check_signing_key(Path(data_dir))


def _check_signing_key(data_dir: Path) -> None:
    from joserfc.jwk import RSAKey

    from blockkit.emulator.services.blocktokens import KEY_FILENAME

    path = data_dir / KEY_FILENAME
    if not path.exists():
        return  # made on first use
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the block-token signing key: {exc.strerror or exc}") from None
    if not raw.strip():
        raise StoreError(f"{path}: the block-token signing key is empty; blockkit leaves it alone: restore it"
                         " from a copy, or move it away to make a new key (block tokens signed with the old"
                         " one then stop verifying)")
    try:
        key = RSAKey.import_key(raw)
    except Exception as exc:  # joserfc and cryptography raise several types for a bad PEM  # noqa: BLE001
        raise StoreError(f"{path}: not a PEM RSA private key ({type(exc).__name__}); blockkit leaves it alone:"
                         " restore it from a copy, or move it away to make a new key") from None
    if not key.is_private:
        raise StoreError(f"{path}: holds a public key; the block-token signing key must be the private key")
